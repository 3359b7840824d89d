// passk's TypeScript compile step: `tsc --target esnext main.ts` (MultiPL-E's command), with the default
// libraries parsed and bound once, at image build time, into a V8 start-up snapshot of this script (node
// --build-snapshot); a compile then only parses, checks and emits the program. Diagnostics are tsc's, on
// stderr; like tsc without --skipLibCheck only in that the bundled .d.ts files are not re-checked (they
// have no errors). Exit status: 0 compiled, 2 errors (tsc's status), 1 could not run.
// Built into a snapshot: the entry is typescript.js followed by this file (see typescript.py).
const passkArgs = ["--target", "esnext", "main.ts"];
const passkLib = "/opt/typescript/lib";

function passkBaseHost(ts, options) {
  const host = ts.createCompilerHost(options);
  host.getDefaultLibLocation = () => passkLib;
  host.getDefaultLibFileName = (opts) => passkLib + "/" + ts.getDefaultLibFileName(opts);
  return host;
}

function passkHost(ts, options, libs) {
  const host = passkBaseHost(ts, options);
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const cached = libs.get(fileName);
    if (cached) return cached;
    return getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate);
  };
  return host;
}

function passkProgram(ts, libs) {
  const parsed = ts.parseCommandLine(passkArgs);
  const options = parsed.options;
  const host = passkHost(ts, options, libs);
  return { program: ts.createProgram(parsed.fileNames, options, host), host };
}

function passkCompile(ts, libs) {
  const { program, host } = passkProgram(ts, libs);
  const main = program.getSourceFile("main.ts");
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(main),
    ...program.getGlobalDiagnostics(),
    ...program.getSemanticDiagnostics(main),
  ];
  const emitted = program.emit(main);
  const all = ts.sortAndDeduplicateDiagnostics([...diagnostics, ...emitted.diagnostics]);
  if (all.length) {
    process.stderr.write(ts.formatDiagnostics(all, {
      getCanonicalFileName: (name) => name, getCurrentDirectory: () => process.cwd(), getNewLine: () => "\n",
    }));
  }
  return all.some((d) => d.category === ts.DiagnosticCategory.Error) ? 2 : 0;
}

// Parses and binds the default libraries of `passkArgs` (a program of an empty main.ts, in memory).
function passkLibraries(ts) {
  const parsed = ts.parseCommandLine(passkArgs);
  const host = passkBaseHost(ts, parsed.options);
  const libs = new Map();
  const getSourceFile = host.getSourceFile;
  host.getSourceFile = (fileName, ...rest) => {
    if (fileName === "main.ts") return ts.createSourceFile("main.ts", "", ts.ScriptTarget.ESNext);
    const file = getSourceFile.call(host, fileName, ...rest);
    if (file) libs.set(fileName, file);
    return file;
  };
  host.fileExists = ((exists) => (name) => name === "main.ts" || exists(name))(host.fileExists);
  const program = ts.createProgram(["main.ts"], parsed.options, host);
  program.getGlobalDiagnostics(); // makes the checker bind every file
  return libs;
}

const passkV8 = require("v8");
if (passkV8.startupSnapshot && passkV8.startupSnapshot.isBuildingSnapshot()) {
  const libs = passkLibraries(module.exports);
  const ts = module.exports;
  passkV8.startupSnapshot.setDeserializeMainFunction(() => {
    process.exitCode = passkCompile(ts, libs);
  });
} else {
  const ts = require("/opt/typescript/lib/typescript.js");
  process.exitCode = passkCompile(ts, new Map());
}
