// SQL the deployment needs, printed by the executable itself (`print-sql <name>`): the
// executable travels alone, without the repository's sql/ directory.

import readOnlyRole from "../../sql/roles/read-only-role.sql" with { type: "text" };

export const SQL_SCRIPTS: Record<string, string> = {
  "read-only-role": readOnlyRole,
};
