// TypeBox schemas of the endpoint's bodies, for the OpenAPI document. (The query is
// validated by validation/product-cost-params.ts alone; its parameters are documented in
// api-docs.ts.)

import { Type as T } from "@sinclair/typebox";

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
