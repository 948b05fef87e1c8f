// The OpenAPI 3.0 document (GET /openapi.json) and Swagger UI (GET /docs), neither behind
// a key. @elysiajs/openapi's generator builds the paths from the routes, the query
// parameters from the route's query schema; the product-costs operation supplies its own
// responses so each status lists exactly the content types the service sends (the generator
// would give every response application/json only, and the 200 is also text/csv).
// Swagger UI's script and stylesheet are embedded in the executable and served from
// /docs/assets/, so the page works on a machine without internet access; its CSP forbids
// any other origin, so a forgotten external reference would fail loudly, not leak.

import { toOpenAPISchema } from "@elysiajs/openapi";
import { SwaggerUIRender } from "@elysiajs/openapi/swagger";
import { Elysia, type DocumentDecoration } from "elysia";
import swaggerUiBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerUiCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../version.ts";
import { CSV_HEADER } from "../body/encode.ts";
import { PRODUCT_COSTS_PATH } from "../edge/routes.ts";
import { DetailCode, ProductCostRow, ValidationErrorBody, ValidationErrorItem } from "../query/product-cost-params.ts";
import { exchangeOf, pageResponse, temporaryRedirect } from "../request/exchange.ts";

export const OPENAPI_PATH = "/openapi.json";
export const DOCS_PATH = "/docs";
export const DOCS_ASSETS: Readonly<Record<string, { file: string; type: string }>> = {
  "/docs/assets/swagger-ui-bundle.js": { file: swaggerUiBundle, type: "text/javascript; charset=utf-8" },
  "/docs/assets/swagger-ui.css": { file: swaggerUiCss, type: "text/css; charset=utf-8" },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** A response header as the document describes it. */
type Header = {
  description: string;
  required?: boolean;
  schema: { type: "string" | "integer"; enum?: string[]; format?: string; pattern?: string; minimum?: number; example?: string | number };
};
/** What every answer of the route says, whatever its status. */
const EVERY_ANSWER: Record<string, Header> = {
  "X-Request-Id": {
    description: "The request's id: the caller's X-Request-Id when it is 1-128 of [A-Za-z0-9._:-], else a generated UUID. Also in the log line.",
    required: true,
    schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
  },
  "X-Content-Type-Options": {
    description: "nosniff: a browser takes the answer for what its Content-Type says, never for HTML or script.",
    required: true,
    schema: { type: "string", enum: ["nosniff"] },
  },
  "X-Demo-Data": {
    description: "true when the service serves its embedded demo data (made-up costs, never to be taken for real ones); absent otherwise.",
    schema: { type: "string", enum: ["true"] },
  },
};
/** What every error says besides its body: errors are never kept. */
const ERROR_HEADERS: Record<string, Header> = {
  ...EVERY_ANSWER,
  "Cache-Control": { description: "no-store: an error is never kept by a cache.", schema: { type: "string", enum: ["no-store"] } },
};
const RETRY_AFTER: Record<string, Header> = {
  ...ERROR_HEADERS,
  "Retry-After": {
    description: "Whole seconds to wait before trying again (with RATE_LIMITED, OVERLOADED and DATABASE_UNAVAILABLE).",
    schema: { type: "integer", format: "int32", minimum: 1, example: 5 },
  },
};

/** An error status: every error body is JSON, its schema a named component, with an example body. */
const error = (description: string, schema: string, example: object, headers: Record<string, Header> = ERROR_HEADERS) =>
  ({ description, headers, content: { "application/json": { schema: ref(schema), example } } });

/** The error bodies, each a component a generator names: `{"detail": <one of the codes>}`. */
const ERROR_SCHEMAS = {
  InvalidMonthRange: DetailCode("INVALID_MONTH_RANGE"),
  InvalidApiKey: DetailCode("INVALID_API_KEY"),
  PreconditionFailed: DetailCode("Precondition Failed"),
  UriTooLong: DetailCode("URI Too Long"),
  RateLimited: DetailCode("RATE_LIMITED"),
  HeadersTooLarge: DetailCode("Request Header Fields Too Large"),
  InternalError: DetailCode("INTERNAL_ERROR"),
  ServiceUnavailable: DetailCode("EXTERNAL_API_NOT_CONFIGURED", "DATABASE_UNAVAILABLE", "OVERLOADED"),
};
const detail = (code: string) => ({ detail: code });

// What the 200 and the 304 say about the answer, so that a client can keep it and ask again
// cheaply (docs/api.md, Caching and conditional requests).
const VALIDATORS: Record<string, Header> = {
  ...EVERY_ANSWER,
  ETag: {
    description:
      "A strong tag of this representation (JSON, CSV or Arrow, and its content coding) of the answer in the data's current state. " +
      "Send it back in If-None-Match: a 304 while the range's data is unchanged. " +
      "Absent where the answer is read from the daily rows directly (a database without the service's migrations, or a role " +
      "that may not read its rollup): nothing versions such an answer, so none is kept and no 304 is sent but for If-None-Match: *.",
    required: false,
    schema: { type: "string", pattern: '^"[A-Za-z0-9_-]+"$', example: '"mXc0Jk1ff5bUc9Bpw2Ff0A-json"' },
  },
  "Cache-Control": {
    description: "private, no-cache: a client may keep the answer and must ask again (If-None-Match) before using it; shared caches do not keep it.",
    required: true,
    schema: { type: "string", enum: ["private, no-cache"] },
  },
  Vary: {
    description: "Accept, Accept-Encoding: the representation depends on both; and Origin when the operator allows cross-origin reads (CORS_ALLOWED_ORIGINS).",
    required: true,
    schema: { type: "string", enum: ["Accept, Accept-Encoding", "Accept, Accept-Encoding, Origin"] },
  },
  "X-Data-Changed-At": {
    description:
      "When a write last changed the data of the range (any segment), ISO 8601 in UTC, by the database's clock. " +
      "Absent when no change is recorded, and where the answer is read from the daily rows directly.",
    schema: { type: "string", format: "date-time" },
  },
};

/** The responses of GET /external/v1/product-costs: every status the service can answer, with its body. */
export const PRODUCT_COSTS_RESPONSES: NonNullable<DocumentDecoration["responses"]> = {
  200: {
    description:
      "One row per product with at least one daily cost row in the range, ordered by erp_sku (nulls last), " +
      "erp_product_id, internal product id. JSON unless the Accept header prefers text/csv, or " +
      "application/vnd.apache.arrow.stream, over application/json (any other type gets JSON).",
    headers: {
      ...VALIDATORS,
      "Content-Disposition": {
        description: 'CSV and Arrow only: attachment; filename="product-costs_<month_from>_<month_to>_<segment>.csv" (the Excel-safe variant: "..._<segment>_excel.csv"; Arrow: ".arrows").',
        schema: {
          type: "string",
          pattern: '^attachment; filename="product-costs_\\d{4}-\\d{2}-\\d{2}_\\d{4}-\\d{2}-\\d{2}_(normal|sample|all)((_excel)?\\.csv|\\.arrows)"$',
          example: 'attachment; filename="product-costs_2026-10-01_2026-10-31_normal.csv"',
        },
      },
      "Content-Encoding": {
        description: "gzip or br when the Accept-Encoding header accepts it and the answer is 1 KiB or more; absent otherwise.",
        schema: { type: "string", enum: ["gzip", "br"] },
      },
    },
    content: {
      "application/json": {
        schema: ref("ProductCosts"),
        example: [
          { erp_product_id: 100003, erp_sku: "SKU-00003", product_name: "Slate Desk Lamp (sample)", purchase_cost_usd: 217.37, inbound_freight_usd: 17.795, shipping_to_customer_usd: 8.65, warehouse_fees_usd: 8.48023 },
          { erp_product_id: null, erp_sku: null, product_name: "Unmapped product", purchase_cost_usd: 5, inbound_freight_usd: null, shipping_to_customer_usd: null, warehouse_fees_usd: 0 },
        ],
      },
      "text/csv": {
        schema: {
          type: "string",
          description:
            "RFC 4180 CSV, UTF-8, CRLF line ends: a header line, then one line per row with the same columns and values as the JSON. " +
            'A null is an empty cell; an empty string is "". Sent with Content-Disposition: attachment. ' +
            "Accept: text/csv; variant=excel asks for the Excel-safe variant (Content-Type text/csv; charset=utf-8; variant=excel): " +
            "a UTF-8 byte order mark first, and a text cell beginning with =, +, -, @, tab or CR quoted behind a single quote.",
        },
        example: `${CSV_HEADER}1001,SKU-B,Bravo,2010.75,0,,1.25\r\n`,
      },
      "application/vnd.apache.arrow.stream": {
        schema: {
          type: "string",
          format: "binary",
          description:
            "An Apache Arrow IPC stream: the schema, one record batch per batch of rows read, the end-of-stream marker. " +
            "The JSON's columns in its order, every field nullable: erp_product_id int64; erp_sku and product_name utf8; " +
            "the four amounts decimal128 with precision 38 and scale 6 (the column's), exact. Sent with Content-Disposition: attachment (.arrows).",
        },
      },
    },
  },
  304: {
    description:
      "Not Modified: If-None-Match names the current ETag of the representation this request would get (or is *), " +
      "and the request passes every check a 200 would. No body; the answer the client holds is current.",
    headers: VALIDATORS,
  },
  400: error(
    "INVALID_MONTH_RANGE: month_from is after month_to, or the range is longer than the operator's MAX_RANGE_DAYS.",
    "InvalidMonthRange",
    detail("INVALID_MONTH_RANGE"),
  ),
  401: error(
    "INVALID_API_KEY: the Authorization header is missing, is not `Bearer <key>`, holds an unknown key, or a key past its expiry.",
    "InvalidApiKey",
    detail("INVALID_API_KEY"),
  ),
  412: error(
    "Precondition Failed: If-Match names no current ETag of this answer (strong comparison: a W/ tag never matches; " +
      "* matches). The data changed since the client's copy, or the tag names another representation.",
    "PreconditionFailed",
    detail("Precondition Failed"),
  ),
  414: error("The request target (path and query) is longer than 64 KiB.", "UriTooLong", detail("URI Too Long")),
  422: error(
    "Request validation failure: one item per failing query parameter, in the order month_from, month_to, segment.",
    "HTTPValidationError",
    {
      detail: [
        {
          type: "date_from_datetime_parsing",
          loc: ["query", "month_from"],
          msg: "Input should be a valid date or datetime, input is too short",
          input: "2026-1",
          ctx: { error: "input is too short" },
        },
      ],
    },
  ),
  429: error(
    "RATE_LIMITED: this key sent more than its rate (the key file's rate=, else the operator's RATE_LIMIT_PER_MINUTE; only when one is set).",
    "RateLimited",
    detail("RATE_LIMITED"),
    RETRY_AFTER,
  ),
  431: error("The request's header fields are larger than 64 KiB in total.", "HeadersTooLarge", detail("Request Header Fields Too Large")),
  500: error("INTERNAL_ERROR: an unexpected failure; the cause is in the service's log, never in the body.", "InternalError", detail("INTERNAL_ERROR")),
  503: error(
    "EXTERNAL_API_NOT_CONFIGURED: the service has no API key configured. " +
      "DATABASE_UNAVAILABLE: the database is unreachable or did not answer in time; retrying later may succeed. " +
      "OVERLOADED: every database connection is busy and the wait list is full or the wait too long; retry after Retry-After seconds.",
    "ServiceUnavailable",
    detail("DATABASE_UNAVAILABLE"),
    RETRY_AFTER,
  ),
};

const DOCUMENTATION = {
  info: {
    title: "product-cost-export",
    version: VERSION,
    description:
      "Four cost columns (USD) per product for an inclusive date range, for a product-profit view. " +
      "A null amount means not costed; 0 is a costed zero. " +
      "Every call needs `Authorization: Bearer <key>` with a key issued by the service operator.",
  },
  tags: [{ name: "product costs", description: "The one operation of the external API." }],
};

const COMPONENTS = {
  securitySchemes: {
    bearerAuth: { type: "http", scheme: "bearer", description: "A product-cost API key issued by the service operator." },
  },
  // The TypeBox schemas serialise to OpenAPI 3.0 schema objects (nullable: true, integer).
  schemas: {
    ProductCosts: { type: "array", items: ref("ProductCostRow"), description: "The answer: one row per product, in the documented order." },
    ProductCostRow,
    ...ERROR_SCHEMAS,
    ValidationError: ValidationErrorItem,
    HTTPValidationError: { ...ValidationErrorBody, properties: { detail: { type: "array", items: ref("ValidationError") } } },
  },
};

// What the page's CSP allows: this origin only (Swagger UI inlines its start script and
// styles, and draws icons from data: URLs).
const DOCS_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const DOCS_PAGE = SwaggerUIRender(
  { title: "product-cost-export API", description: "OpenAPI document of product-cost-export", version: VERSION },
  {
    // Relative to the page (/docs): behind a reverse proxy on a sub-path (/costs/docs) they
    // still reach this service (/costs/openapi.json, /costs/docs/assets/...).
    url: OPENAPI_PATH.slice(1),
    dom_id: "#swagger-ui",
    cdn: "docs/assets/swagger-ui-bundle.js",
    theme: "docs/assets/swagger-ui.css",
    autoDarkMode: true,
    deepLinking: true,
    // Swagger UI's default would fetch a validity badge from a public validator.
    validatorUrl: "none",
    // Keys typed into "Authorize" stay in the page, not in the browser's storage.
    persistAuthorization: false,
  },
);

/**
 * The generator leaves a parameter's description in its schema, where Swagger UI does not
 * show it: moved to the parameter itself.
 */
function describeOnParameters(paths: object) {
  type Parameter = { name: string; schema?: { description?: string } };
  for (const operation of Object.values(paths).flatMap((item: Record<string, { parameters?: Parameter[] }>) => Object.values(item))) {
    operation.parameters = operation.parameters?.map(({ schema: { description, ...schema } = {}, ...parameter }) =>
      description === undefined ? { ...parameter, schema } : { ...parameter, description, schema },
    );
  }
}

/**
 * The request headers of conditional requests, which the route reads besides its query
 * (the generator documents only the query schema): without them a generated client knows
 * nothing of revalidation.
 */
const CONDITIONAL_PARAMETERS = [
  {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "ETags of copies the client holds (a list, W/ ignored, or *): when one names the current state, 304 with no body.",
    schema: { type: "string" },
  },
  {
    name: "If-Match",
    in: "header",
    required: false,
    description: "Answer only if the current ETag is one of these (strong comparison, or *); otherwise 412 Precondition Failed.",
    schema: { type: "string" },
  },
];

function addConditionalParameters(paths: object) {
  const operation = (paths as Record<string, Record<string, { parameters?: object[] }>>)[PRODUCT_COSTS_PATH]?.get;
  if (operation) operation.parameters = [...(operation.parameters ?? []), ...CONDITIONAL_PARAMETERS];
}

/**
 * HEAD of the route, which the generator never lists: Bun answers HEAD with the GET route
 * (routes.ts), the GET's status and headers without content (RFC 9110 §9.3.2). So it is the
 * GET operation with every response's headers and no `content`: a HEAD answer has no body.
 * Its Content-Type is the one the GET would send (OpenAPI 3.0 gives a header named
 * Content-Type no meaning, so the description says it).
 */
function addHeadOperation(paths: object) {
  type Operation = { operationId?: string; summary?: string; description?: string; responses: Record<string, { content?: object }> };
  const item = (paths as Record<string, Record<string, Operation>>)[PRODUCT_COSTS_PATH];
  const get = item?.get;
  if (!item || !get) return;
  item.head = {
    ...get,
    operationId: "headProductCosts",
    summary: "Product costs' status and headers, without the rows",
    description:
      "What GET answers with the same query and headers, without content: the same status and headers " +
      "(Content-Type, ETag, X-Data-Changed-At, Content-Encoding, Content-Disposition), so that a client can learn " +
      "the current ETag of a range, or a CSV's file name, without transferring the rows. " +
      "The conditional headers apply as to GET (304, 412).",
    responses: Object.fromEntries(Object.entries(get.responses).map(([status, { content: _body, ...response }]) => [status, response])),
  };
}

/**
 * The document's text with its server: the service as this request reached it
 * (request/public-base.ts), absolute, so that a generator given the document's URL calls the
 * same service; "/" when the request's Host is not an authority. `rest` is the rest of the
 * document as JSON, made once: only the server differs from one request to the next.
 */
function withServer(rest: string, base: string | undefined): string {
  const server = base === undefined ? { url: "/", description: "This service (the origin this document was fetched from)." } : { url: base, description: "This service, as this document was fetched from it." };
  return `{"openapi":"3.0.3","servers":${JSON.stringify([server])},${rest.slice(1)}`;
}

/** Routes: /openapi.json, /docs and its assets. Hidden from the document themselves. */
export function apiDocs() {
  const hidden = { detail: { hide: true } };
  // Built on first request, when every route of the app is registered; the routes never change after.
  let document: string | undefined;
  let app = new Elysia()
    .get(
      OPENAPI_PATH,
      ({ request }) => {
        if (!document) {
          const { paths, components } = toOpenAPISchema(app, undefined, undefined, undefined, "3.0.3");
          describeOnParameters(paths);
          addConditionalParameters(paths);
          addHeadOperation(paths);
          document = JSON.stringify({
            ...DOCUMENTATION,
            paths,
            components: { ...COMPONENTS, schemas: { ...components.schemas, ...COMPONENTS.schemas } },
          });
        }
        return pageResponse(withServer(document, exchangeOf(request).publicBase()), { "content-type": "application/json;charset=utf-8" });
      },
      hidden,
    )
    .get(
      DOCS_PATH,
      ({ request }) =>
        // Elysia serves /docs/ here too, where the page's relative URLs would miss: send the
        // browser to /docs, relatively, so that a sub-path in front of the service is kept.
        new URL(request.url).pathname.endsWith("/")
          ? temporaryRedirect("../docs")
          : pageResponse(DOCS_PAGE, {
              "content-type": "text/html; charset=utf-8",
              "cache-control": "no-cache",
              "x-content-type-options": "nosniff",
              "content-security-policy": DOCS_CSP,
            }),
      hidden,
    );
  for (const [path, asset] of Object.entries(DOCS_ASSETS)) {
    app = app.get(
      path,
      () =>
        pageResponse(Bun.file(asset.file), { "content-type": asset.type, "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff" }),
      hidden,
    );
  }
  return app;
}
