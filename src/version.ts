// Filled in by build.sh (bun build --define); "dev" when run from source.
declare const BUILD_VERSION: string | undefined;
declare const BUILD_COMMIT: string | undefined;
declare const BUILD_COMMIT_DATE: string | undefined;

export const VERSION: string = typeof BUILD_VERSION === "string" ? BUILD_VERSION : "dev";
export const COMMIT: string = typeof BUILD_COMMIT === "string" ? BUILD_COMMIT : "unknown";
/** The day of the commit it was built from (YYYY-MM-DD), for the manual page; "" when run from source. */
export const COMMIT_DATE: string = typeof BUILD_COMMIT_DATE === "string" ? BUILD_COMMIT_DATE : "";
