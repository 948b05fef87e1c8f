// The endpoint's TypeBox schemas: its query, which Elysia validates and @elysiajs/openapi
// documents, and its bodies, for the document.

// First: @elysiajs/openapi, when its module first runs, sets TypeBox's `date` format to a strict
// ISO check of its own (whatever was set before). Imported here, it has run before the Set
// below, whichever module imports it first; imported after this module without it, every lax
// date (1704067200, a datetime at midnight) would get 422.
import "@elysiajs/openapi";
import { FormatRegistry, Kind, Type as T, TypeRegistry } from "@sinclair/typebox";
import { DEFAULT_SEGMENT, isLaxDate, isSegment, SEGMENTS, type Segment } from "./product-cost-params.ts";

// Pydantic's lax date is this service's `date`, so the document says `format: date` as
// FastAPI's does. It replaces Elysia's own `date` check, which no other route uses (and
// which accepts 2024-02-30 by rolling it over to March).
FormatRegistry.Set("date", isLaxDate);
// A string enum TypeBox checks and the generator documents as `enum` with its default (a
// union of literals would be documented without them).
TypeRegistry.Set("Segment", (_, value) => isSegment(value));

/** The query as the route declares it; its failures become Pydantic's items in error-handler.ts. */
export const ProductCostsQuery = T.Object({
  // `example`, not `examples`: the document is OpenAPI 3.0.
  month_from: T.String({ format: "date", description: "Inclusive start date, YYYY-MM-DD (a full date despite the name).", example: "2026-10-01" }),
  month_to: T.String({ format: "date", description: "Inclusive end date, YYYY-MM-DD. Must not be before month_from.", example: "2026-10-31" }),
  segment: T.Optional(
    T.Unsafe<Segment>({
      [Kind]: "Segment",
      type: "string",
      enum: [...SEGMENTS],
      default: DEFAULT_SEGMENT,
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
