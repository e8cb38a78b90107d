// Runs before `npm ci`: fail early, with one clear message, on a Node too old for Vigil's dependencies.
// (VIGIL_CHECK_NODE_VERSION pretends another version, for the test of this script.)
const version = process.env.VIGIL_CHECK_NODE_VERSION || process.versions.node;
const [major, minor] = version.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `Vigil needs Node >= 22.19 (Node 24 LTS recommended); this is Node ${version}.\n` +
      `  @slack/bolt 5 and @kubernetes/client-node 2 bundle undici 8, which does not load on older Node.\n` +
      `  Get Node 24 from the npm registry with:  . scripts/node24.sh   (then run npm ci again)`,
  );
  process.exit(1);
}
