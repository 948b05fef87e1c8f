// The errors the HTTP layer answers with, and the one function that turns any thrown
// value into the documented JSON body. Bodies are what FastAPI sends, byte for byte.

/** An error with a fixed status and `{"detail": "<code>"}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const NOT_CONFIGURED = () => new ApiError(503, "EXTERNAL_API_NOT_CONFIGURED");
export const INVALID_API_KEY = () => new ApiError(401, "INVALID_API_KEY");
export const INVALID_MONTH_RANGE = () => new ApiError(400, "INVALID_MONTH_RANGE");
export const DATABASE_UNAVAILABLE = () => new ApiError(503, "DATABASE_UNAVAILABLE");
export const INTERNAL_ERROR = () => new ApiError(500, "INTERNAL_ERROR");
