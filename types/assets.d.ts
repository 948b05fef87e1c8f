// SQL files are imported as text so that `bun build --compile` embeds them in the executable.
declare module "*.sql" {
  const text: string;
  export default text;
}
