// Filled in by build.sh (bun build --define); "dev" when run from source.
declare const BUILD_VERSION: string | undefined;
declare const BUILD_COMMIT: string | undefined;

export const VERSION: string = typeof BUILD_VERSION === "string" ? BUILD_VERSION : "dev";
export const COMMIT: string = typeof BUILD_COMMIT === "string" ? BUILD_COMMIT : "unknown";
