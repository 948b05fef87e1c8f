// SQL files are imported as text so that `bun build --compile` embeds them in the executable.
declare module "*.sql" {
  const text: string;
  export default text;
}

// Files embedded into the executable as paths (import x from "./f" with { type: "file" }).
declare module "*.zst" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
