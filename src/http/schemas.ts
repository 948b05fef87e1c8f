// TypeBox schemas of the endpoint: they drive the OpenAPI document and Elysia's own
// query check. The `date` format is Pydantic's lax date (see validation/lax-date.ts), so
// the schema accepts exactly what the service accepts.

import { FormatRegistry, Type as T } from "@sinclair/typebox";
import { t } from "elysia";
import { parseLaxDate } from "../validation/lax-date.ts";

// Elysia registers a lenient `date` format of its own (it rolls 2024-02-30 over to March);
// replace it so that Elysia's check and ours can never disagree.
FormatRegistry.Set("date", (value) => parseLaxDate(value).ok);

export const ProductCostQuery = t.Object({
  month_from: t.String({
    format: "date",
    description: "Inclusive start date, YYYY-MM-DD (a full date despite the name).",
    example: "2026-10-01", // `example`, not `examples`: the document is OpenAPI 3.0
  }),
  month_to: t.String({
    format: "date",
    description: "Inclusive end date, YYYY-MM-DD. Must not be before month_from.",
    example: "2026-10-31",
  }),
  segment: t.Optional(
    t.UnionEnum(["normal", "sample", "all"], {
      default: "normal",
      description: "normal = normal products; sample = sample products; all = both.",
    }),
  ),
});

const amount = (what: string) =>
  T.Number({ nullable: true, description: `${what} in USD, summed over the range. null = not costed; 0 = a costed zero.` });

export const ProductCostRow = T.Object(
  {
    erp_product_id: T.Integer({ nullable: true, description: "Product id in the ERP. null for unmapped products." }),
    erp_sku: T.String({ nullable: true, description: "SKU in the ERP. null for unmapped products." }),
    product_name: T.String({ nullable: true, description: "Product name." }),
    purchase_cost_usd: amount("Purchase cost"),
    inbound_freight_usd: amount("Inbound (first-leg) freight"),
    shipping_to_customer_usd: amount("Shipping to customer (last leg)"),
    warehouse_fees_usd: amount("Warehouse fees"),
  },
  { additionalProperties: false },
);

/** `{"detail":"<CODE>"}`, the body of every error but 422; `codes` are the values this status can carry. */
export const DetailCode = (...codes: [string, ...string[]]) =>
  T.Object({ detail: T.String({ enum: codes }) }, { additionalProperties: false });

/** One Pydantic error item; the keys are always written in this order. */
export const ValidationErrorItem = T.Object({
  type: T.String({ description: "Error type, e.g. missing, date_from_datetime_parsing, enum." }),
  loc: T.Array(T.Union([T.String(), T.Integer()]), { description: 'Location of the invalid input, e.g. ["query","month_from"].' }),
  msg: T.String({ description: "Message." }),
  input: T.Any({ description: "The offending input (null when the parameter is missing)." }),
  ctx: T.Optional(T.Object({}, { additionalProperties: true, description: "Additional context." })),
});

export const ValidationErrorBody = T.Object({ detail: T.Array(ValidationErrorItem) }, { additionalProperties: false });
