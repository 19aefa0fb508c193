// yowasp.mjs runs one tool of the YoWASP toolchain (the WebAssembly builds
// of yosys, nextpnr-ice40, icepack and icepll published on npm as
// @yowasp/yosys and @yowasp/nextpnr-ice40) as if it were a native program:
//
//	node yowasp.mjs TOOL ARGS...
//
// hw/synth writes this file out and runs it (Toolchain "yowasp"). The
// packages are looked up under $PTM_YOWASP/node_modules (npm install
// --prefix $PTM_YOWASP; scripts/install-yowasp.sh).
//
// YoWASP runs a tool in a virtual file system. This runner copies the
// folder $PTM_YOWASP_MOUNT (default: the working folder) into it at its
// real absolute path, so absolute paths in arguments and scripts work, and
// the working folder's contents once more at the root, since a WASI
// program's working folder is "/": relative paths work too. After the
// run every file the tool created or changed is written back (also when
// the tool failed, so its log is there), and the runner exits with the
// tool's status.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const packages = {
  yosys: "@yowasp/yosys",
  "nextpnr-ice40": "@yowasp/nextpnr-ice40",
  icepack: "@yowasp/nextpnr-ice40",
  icepll: "@yowasp/nextpnr-ice40",
};

function fail(msg) {
  process.stderr.write(`ERROR: yowasp.mjs: ${msg}\n`);
  process.exit(127);
}

const [tool, ...args] = process.argv.slice(2);
if (!(tool in packages)) fail(`unknown tool ${JSON.stringify(tool)} (one of ${Object.keys(packages).join(", ")})`);
const prefix = process.env.PTM_YOWASP;
if (!prefix) fail("PTM_YOWASP is not set (the npm prefix holding node_modules/@yowasp)");
const bundle = path.join(prefix, "node_modules", packages[tool], "gen", "bundle.js");
if (!fs.existsSync(bundle)) fail(`${packages[tool]} is not installed under ${prefix} (run scripts/install-yowasp.sh)`);
if (args.length === 1 && args[0] === "--yowasp-package-version") {
  const pj = JSON.parse(fs.readFileSync(path.join(prefix, "node_modules", packages[tool], "package.json"), "utf8"));
  process.stdout.write(`${pj.name} ${pj.version}\n`);
  process.exit(0);
}
const mod = await import(pathToFileURL(bundle).href);
const run = mod.commands[tool];
if (!run) fail(`${packages[tool]} has no command ${tool}`);

const cwd = process.cwd();
const mount = path.resolve(process.env.PTM_YOWASP_MOUNT || cwd);
if (cwd !== mount && !cwd.startsWith(mount + path.sep)) fail(`working folder ${cwd} is not inside PTM_YOWASP_MOUNT ${mount}`);

// readTree reads a folder into a YoWASP tree (folders are objects, files
// Uint8Arrays); symbolic links are followed.
function readTree(dir) {
  const tree = {};
  for (const name of fs.readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) tree[name] = readTree(p);
    else if (st.isFile()) tree[name] = new Uint8Array(fs.readFileSync(p));
  }
  return tree;
}

// subtree returns the node of tree at the relative path rel ("" = tree).
function subtree(tree, rel) {
  let t = tree;
  for (const part of rel.split(path.sep).filter(Boolean)) t = t?.[part];
  return t;
}

const mounted = readTree(mount);
const parts = mount.split(path.sep).filter(Boolean);
const root = { ...subtree(mounted, path.relative(mount, cwd)) };
if (parts.length === 0) fail("PTM_YOWASP_MOUNT must not be /");
let node = root;
for (const [i, part] of parts.entries()) {
  const leaf = i === parts.length - 1;
  // The real path wins over a same-named entry of the working folder.
  node[part] = leaf ? mounted : {};
  node = node[part];
}

const before = new Map();
function index(tree, prefix) {
  for (const [name, v] of Object.entries(tree)) {
    const p = path.join(prefix, name);
    if (v instanceof Uint8Array) before.set(p, v);
    else index(v, p);
  }
}
index(mounted, mount);
const rootCopy = subtree(mounted, path.relative(mount, cwd));
for (const [name, v] of Object.entries(rootCopy)) {
  if (name === parts[0]) continue;
  if (v instanceof Uint8Array) before.set(path.join(cwd, name), v);
  else index(v, path.join(cwd, name));
}

// writeBack writes the files of the tree the tool left that are new or
// changed: those under the mounted real path to it, those elsewhere
// (written relative to "/") under the working folder.
function writeBack(tree) {
  const out = [];
  const walk = (t, virt) => {
    for (const [name, v] of Object.entries(t)) {
      const p = path.join(virt, name);
      if (v instanceof Uint8Array || typeof v === "string") out.push([p, v]);
      else walk(v, p);
    }
  };
  walk(tree, "/");
  for (const [virt, data] of out) {
    let real;
    if (virt === mount || virt.startsWith(mount + path.sep)) real = virt;
    else if (virt.split(path.sep)[1] === parts[0]) continue; // outside the mount on the real path
    else real = path.join(cwd, virt);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    const old = before.get(real);
    if (old && Buffer.compare(Buffer.from(old), Buffer.from(bytes)) === 0) continue;
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.writeFileSync(real, bytes);
  }
}

const write = (stream) => (bytes) => {
  if (bytes !== null) stream.write(bytes);
};
let code = 0;
let files;
try {
  files = await run(args, root, { stdout: write(process.stdout), stderr: write(process.stderr), decodeASCII: false });
} catch (e) {
  code = 1;
  if (e instanceof mod.Exit) {
    code = e.code || 1;
    files = e.files;
  } else {
    // A C++ exception or abort ends the WebAssembly program in a trap
    // (nextpnr does so after "Unable to find legal placement"): its
    // files are lost, its output (with the tool's ERROR line) is not.
    process.stderr.write(`ERROR: yowasp.mjs: ${tool} stopped: ${e?.message ?? e} (its files are lost)\n`);
  }
}
if (files) writeBack(files);
process.exitCode = code;
