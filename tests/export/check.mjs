// check.mjs - DuckDB (its engine, from the npm package @duckdb/node-api)
// reads heapfs export's Parquet tables and must answer as heapfs's own files
// do, trace by trace.  Not our reader reading our output back: the figures
// come from SQL over read_parquet(..., hive_partitioning=true) on one side
// and from `heapfs cat` on the other.
//
//   node check.mjs HEAPFS ALL_DIR LATEST_DIR TRACE...
//
// ALL_DIR holds `heapfs export TRACE... -o ALL_DIR` (every GC), LATEST_DIR
// `heapfs export TRACE... --gcs latest -o LATEST_DIR`.  Per trace:
//   - the GCs exported are the timeline's;
//   - histogram at the first, a middle and the last GC equals
//     gc/NNN/by-type/table (count, shallow, deep and retained sizes; the
//     estimates and samples of a sampled recording);
//   - at GCs with a graph: objects' count, bytes and reachable count equal
//     gc/NNN/info's (its parts part-0, part-1, ... over ascending ids), edges' count its edges, roots' count its roots, and the
//     object retaining the most equals gc/NNN/dominators/top's first row;
//   - gcs equals timeline/gcs.csv, every column (empty field = NULL);
//   - allocs equals allocs/by-site as a set, and its top 10 by count in order;
// then the issue's acceptance query over LATEST_DIR equals the traces'
// gc/latest/by-type/table added up, and docs/export.md's fleet queries run.
// A second reader, arrow-rs (the Rust parquet crate, compiled to
// WebAssembly in the npm package parquet-wasm), reads every file of
// ALL_DIR: its row count, and per column the non-null count and the sum of
// the values (string lengths in bytes, true flags), equal DuckDB's.
// Exit 0 when every check passes; one line per check.
import { execFileSync } from 'node:child_process';
import { basename } from 'node:path';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
const parquetWasm = createRequire(import.meta.url)('parquet-wasm/node');

const [heapfs, allDir, latestDir, ...traces] = process.argv.slice(2);
if (!traces.length) {
  console.error('usage: node check.mjs HEAPFS ALL_DIR LATEST_DIR TRACE...');
  process.exit(2);
}

let passed = 0, failed = 0;
function ok(cond, what, detail = '') {
  if (cond) { passed++; console.log(`ok - ${what}`); }
  else { failed++; console.log(`not ok - ${what}${detail ? ': ' + detail : ''}`); }
}

function cat(trace, path) {
  return execFileSync(heapfs, ['cat', '-q', trace, path], { maxBuffer: 1 << 30 }).toString();
}
function ls(trace, path) {
  return execFileSync(heapfs, ['ls', '-q', trace, path]).toString().split('\n').filter(Boolean);
}
function tsv(text) {
  const lines = text.split('\n').filter(Boolean);
  const head = lines.shift().split('\t');
  return lines.map(l => Object.fromEntries(l.split('\t').map((v, i) => [head[i], v])));
}
function kv(text) {
  return Object.fromEntries(text.split('\n').filter(Boolean).map(l => { const i = l.indexOf('\t'); return [l.slice(0, i), l.slice(i + 1)]; }));
}
// RFC 4180, as fs/table.c writes it
function csv(text) {
  const rows = []; let row = [], f = '', q = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === '"' && text[i + 1] === '"') { f += '"'; i++; } else if (c === '"') q = false; else f += c;
    } else if (c === '"') q = true;
    else if (c === ',') { row.push(f); f = ''; }
    else if (c === '\n') { row.push(f); rows.push(row); row = []; f = ''; }
    else f += c;
  }
  const head = rows.shift();
  return rows.map(r => Object.fromEntries(r.map((v, i) => [head[i], v])));
}
// heapfs's empty field is SQL's NULL
const val = v => (v === null || v === undefined ? '' : String(v));
const nameOf = t => basename(t).replace(/\.(htr|hprof|jfr)$/, '');

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
async function sql(q) {
  const r = await con.runAndReadAll(q);
  return r.getRowObjectsJson();
}
const tbl = (dir, t) => `read_parquet('${dir}/${t}/**/*.parquet', hive_partitioning = true)`;

// the padded gc/NNN name of a GC number
function gcDirs(trace) {
  const m = new Map();
  for (const n of ls(trace, 'gc')) if (/^\d+$/.test(n)) m.set(Number(n), n);
  return m;
}

async function checkHistogram(trace, name, gc, dir) {
  const file = tsv(cat(trace, `gc/${dir}/by-type/table`));
  const rows = await sql(`SELECT * FROM ${tbl(allDir, 'histogram')} WHERE trace = '${name}' AND gc = ${gc}`);
  const byType = new Map(rows.map(r => [r.type, r]));
  let bad = [];
  for (const f of file) {
    const r = byType.get(f.name);
    if (!r) { bad.push(`${f.name} missing`); continue; }
    const want = {
      count: f.count ?? f.est_count, shallow_size: f.shallow_size ?? f.est_shallow_size,
      deep_count: f.deep_count, deep_size: f.deep_size,
      retained_count: f.retained_count, retained_size: f.retained_size, samples: f.samples,
    };
    for (const [k, v] of Object.entries(want))
      if (val(r[k]) !== val(v)) bad.push(`${f.name}.${k}: ${val(r[k])} != ${val(v)}`);
  }
  if (rows.length !== file.length) bad.push(`${rows.length} rows, the table ${file.length}`);
  ok(!bad.length, `${name}: histogram at GC ${gc} equals gc/${dir}/by-type/table (${file.length} types${file[0] && file[0].retained_size !== undefined ? ', with retained sizes' : ''})`,
     bad.slice(0, 5).join('; '));
}

async function checkGraph(trace, name, gc, dir) {
  const info = kv(cat(trace, `gc/${dir}/info`));
  const where = `WHERE trace = '${name}' AND gc = ${gc}`;
  const [o] = await sql(`SELECT count(*) AS n, sum(size) AS bytes, count(*) FILTER (WHERE reachable) AS reach FROM ${tbl(allDir, 'objects')} ${where}`);
  ok(o.n === info.objects && o.bytes === info.bytes && o.reach === info.reachable_objects,
     `${name}: objects at GC ${gc}: ${o.n} objects, ${o.bytes} bytes, ${o.reach} reachable, as gc/${dir}/info`,
     `info ${info.objects} ${info.bytes} ${info.reachable_objects}`);
  // parts in order: part-k holds ids above part-(k-1)'s (DuckDB's bigint
  // comparison: the JSON rows carry them as strings)
  const parts = await sql(`SELECT parse_filename(filename) AS f, count(*) AS n, min(id) AS lo, max(id) AS hi,
                             lag(max(id)) OVER (ORDER BY min(id)) < min(id) OR lag(max(id)) OVER (ORDER BY min(id)) IS NULL AS after
                           FROM read_parquet('${allDir}/objects/trace=${name}/gc=${gc}/*.parquet', filename = true)
                           GROUP BY filename ORDER BY lo`);
  ok(parts.length && parts.every((p, k) => p.f === `part-${k}.parquet` && p.after),
     `${name}: objects at GC ${gc} in ${parts.length} part(s), part-0, part-1, ... over ascending ids`, JSON.stringify(parts));
  const [e] = await sql(`SELECT count(*) AS n FROM ${tbl(allDir, 'edges')} ${where}`);
  ok(e.n === info.edges, `${name}: edges at GC ${gc}: ${e.n}, as info's edges`, `info ${info.edges}`);
  const [r] = await sql(`SELECT count(*) AS n FROM ${tbl(allDir, 'roots')} ${where}`);
  ok(r.n === info.roots, `${name}: roots at GC ${gc}: ${r.n}, as info's roots`, `info ${info.roots}`);
  const top = tsv(cat(trace, `gc/${dir}/dominators/top`))[0];
  const [t] = await sql(`SELECT id, type, retained_size, retained_count, coalesce(CAST(dominator AS VARCHAR), 'roots') AS dom
                         FROM ${tbl(allDir, 'objects')} ${where} ORDER BY retained_size DESC NULLS LAST, id LIMIT 1`);
  ok(top && t.id === top.id && t.retained_size === top.retained_size && t.retained_count === top.retained_count &&
     t.dom === top.dominator && t.type === top.type,
     `${name}: the object retaining most at GC ${gc} (${t.type} ${t.id}, ${t.retained_size} bytes) is dominators/top's first`,
     JSON.stringify([t, top]));
}

async function checkTimeline(trace, name) {
  const file = csv(cat(trace, 'timeline/gcs.csv'));
  const rows = await sql(`SELECT * FROM ${tbl(allDir, 'gcs')} WHERE trace = '${name}' ORDER BY gc`);
  const cols = Object.keys(file[0] || {});
  const bad = [];
  if (rows.length !== file.length) bad.push(`${rows.length} rows, the file ${file.length}`);
  file.forEach((f, i) => cols.forEach(c => { if (rows[i] && val(rows[i][c]) !== f[c]) bad.push(`gc ${f.gc} ${c}: ${val(rows[i][c])} != ${f[c]}`); }));
  ok(!bad.length, `${name}: gcs equals timeline/gcs.csv (${file.length} GCs, ${cols.length} columns)`, bad.slice(0, 5).join('; '));
}

async function checkAllocs(trace, name) {
  const file = tsv(cat(trace, 'allocs/by-site'));
  const want = file.map(f => [f.site, f.type, val(f.count ?? f.est_count)].join('\t'));
  const rows = await sql(`SELECT site, type, count FROM ${tbl(allDir, 'allocs')} WHERE trace = '${name}'`);
  const got = rows.map(r => [r.site, r.type, val(r.count)].join('\t'));
  const a = [...want].sort(), b = [...got].sort();
  ok(a.length === b.length && a.every((x, i) => x === b[i]), `${name}: allocs equals allocs/by-site (${file.length} sites)`,
     `${a.length} vs ${b.length} rows`);
  // the file sorts by count (estimated bytes when sampled), then site, then type
  const key = file[0] && file[0].est_bytes !== undefined ? 'bytes' : 'count';
  const top = await sql(`SELECT site, type FROM ${tbl(allDir, 'allocs')} WHERE trace = '${name}'
                         ORDER BY ${key} DESC NULLS LAST, site, type LIMIT 10`);
  const wantTop = file.slice(0, 10).map(f => f.site + '\t' + f.type), gotTop = top.map(r => r.site + '\t' + r.type);
  ok(wantTop.join('\n') === gotTop.join('\n'), `${name}: the top ${wantTop.length} allocation sites in order`,
     JSON.stringify([gotTop.slice(0, 3), wantTop.slice(0, 3)]));
}

// SELECT type, sum(count) ... LIMIT 5 over --gcs latest: the three (or
// more) traces' gc/latest/by-type/table added up.
async function checkAcceptance() {
  const sums = new Map();
  for (const t of traces.filter(t => ls(t, 'gc/latest').includes('by-type')))
    for (const f of tsv(cat(t, 'gc/latest/by-type/table')))
      sums.set(f.name, (sums.get(f.name) || 0n) + BigInt(f.count ?? f.est_count));
  const want = [...sums.entries()].sort((x, y) => (y[1] > x[1] ? 1 : y[1] < x[1] ? -1 : 0)).slice(0, 5);
  const q = `SELECT type, sum(count) FROM read_parquet('${latestDir}/histogram/**/*.parquet', hive_partitioning=true) GROUP BY type ORDER BY 2 DESC LIMIT 5`;
  const got = (await sql(q)).map(r => [r.type, BigInt(r['sum(count)'])]);
  const same = got.length === want.length && got.every(([ty, s], i) => sums.get(ty) === s && want[i][1] === s);
  ok(same, `acceptance: ${q.replace(latestDir, 'fleet')} equals the ${traces.length} traces' gc/latest/by-type/table added up (${got.map(g => g[0] + ' ' + g[1]).join(', ')})`,
     JSON.stringify([got.map(String), want.map(String)]));
}

// docs/export.md's DuckDB queries (```sql duckdb blocks, `fleet` the
// directory) must run.
async function checkDocQueries() {
  const doc = readFileSync(new URL('../../docs/export.md', import.meta.url), 'utf8');
  const blocks = [...doc.matchAll(/```sql duckdb\n([\s\S]*?)```/g)].map(m => m[1]);
  for (const b of blocks) {
    const q = b.replaceAll("'fleet/", `'${allDir}/`);
    let err = '';
    let n = 0;
    try { n = (await sql(q)).length; } catch (e) { err = String(e.message || e); }
    ok(!err, `docs/export.md's DuckDB query runs (${n} rows): ${b.split('\n')[0].replace(/^-- /, '')}`, err);
  }
  ok(blocks.length >= 4, `docs/export.md has the fleet questions for DuckDB (${blocks.length} queries)`);
}

// Per column of one file: [non-null count, sum] as arrow-rs decodes it.
function arrowFingerprint(file) {
  const table = tableFromIPC(parquetWasm.readParquet(new Uint8Array(readFileSync(file))).intoIPCStream());
  const cols = table.schema.fields.map(f => {
    const v = table.getChild(f.name);
    let n = 0n, sum = 0n;
    for (let i = 0; i < v.length; i++) {
      const x = v.get(i);
      if (x === null) continue;
      n++;
      sum += typeof x === 'string' ? BigInt(Buffer.byteLength(x)) : typeof x === 'boolean' ? (x ? 1n : 0n) : BigInt(x);
    }
    return [f.name, `${n}/${sum}`];
  });
  return { rows: table.numRows, cols };
}

async function duckFingerprint(file, names, types) {
  const exprs = names.map((c, i) => {
    const q = `"${c}"`;
    const s = types[i] === 'VARCHAR' ? `strlen(${q})` : types[i] === 'BOOLEAN' ? `CAST(${q} AS BIGINT)` : q;
    return `CAST(count(${q}) AS VARCHAR) || '/' || CAST(coalesce(sum(${s}), 0) AS VARCHAR) AS c${i}`;
  });
  const [r] = await sql(`SELECT count(*) AS n, ${exprs.join(', ')} FROM read_parquet('${file}', hive_partitioning = false)`);
  return { rows: Number(r.n), cols: names.map((c, i) => [c, r['c' + i]]) };
}

// docs/export.md's "types that grow in every instance" over GROWTH_DIR
// (traces of several GCs) equals what their by-type tables at the first
// and last GC say.
async function checkGrowth() {
  const dir = process.env.GROWTH_DIR, ts = (process.env.GROWTH_TRACES || '').split(' ').filter(Boolean);
  if (!dir || !ts.length) return;
  const doc = readFileSync(new URL('../../docs/export.md', import.meta.url), 'utf8');
  const q = [...doc.matchAll(/```sql duckdb\n([\s\S]*?)```/g)].map(m => m[1]).find(b => b.includes('grow in every instance'));
  const per = ts.map(t => {
    const dirs = gcDirs(t), gcs = [...dirs.keys()].sort((a, b) => a - b);
    const at = gc => new Map(tsv(cat(t, `gc/${dirs.get(gc)}/by-type/table`)).map(f => [f.name, BigInt(f.count)]));
    const first = at(gcs[0]), last = at(gcs[gcs.length - 1]);
    const g = new Map();
    for (const ty of new Set([...first.keys(), ...last.keys()])) g.set(ty, (last.get(ty) || 0n) - (first.get(ty) || 0n));
    return g;
  });
  const want = [...per[0].keys()].filter(ty => per.every(g => g.has(ty) && g.get(ty) > 0n))
    .map(ty => `${ty} ${per.map(g => g.get(ty)).reduce((a, b) => (a < b ? a : b))}`).sort();
  const got = (await sql(q.replaceAll("'fleet/", `'${dir}/`))).map(r => `${r.type} ${r.least_growth}`).sort();
  ok(want.length > 0 && want.join('|') === got.join('|'),
     `docs/export.md's "types that grow in every instance" over ${ts.length} traces equals their by-type tables at the first and last GC (${got.length} types, e.g. ${got[0]})`,
     JSON.stringify([got.slice(0, 4), want.slice(0, 4)]));
}

async function checkSecondReader() {
  const files = (await sql(`SELECT file FROM glob('${allDir}/*/**/*.parquet') ORDER BY file`)).map(r => r.file);
  let bad = [], rows = 0;
  for (const f of files) {
    const a = arrowFingerprint(f);
    const desc = await sql(`DESCRIBE SELECT * FROM read_parquet('${f}', hive_partitioning = false)`);
    const d = await duckFingerprint(f, desc.map(x => x.column_name), desc.map(x => x.column_type));
    rows += a.rows;
    if (JSON.stringify(a) !== JSON.stringify(d))
      bad.push(`${f.slice(allDir.length)}: arrow-rs ${JSON.stringify(a)} DuckDB ${JSON.stringify(d)}`);
  }
  ok(files.length > 0 && !bad.length,
     `a second reader, arrow-rs (parquet-wasm), reads all ${files.length} files (${rows} rows) with DuckDB's row counts, non-null counts and column sums`,
     bad.slice(0, 2).join('; '));
}

for (const t of traces) {
  const name = nameOf(t);
  const dirs = gcDirs(t);
  const gcs = [...dirs.keys()].sort((a, b) => a - b);
  // a recording without objects (JFR) has GC directories with info only,
  // and no histogram partitions
  const typed = gcs.filter(gc => ls(t, `gc/${dirs.get(gc)}`).includes('by-type'));
  const exported = (await sql(`SELECT file FROM glob('${allDir}/histogram/trace=${name}/*/*.parquet')`))
    .map(r => Number(/gc=(\d+)/.exec(r.file)[1])).sort((a, b) => a - b);
  ok(exported.join(',') === typed.join(','), `${name}: histogram partitions for every GC with objects (${typed.length} of ${gcs.length})`,
     `${exported} vs ${typed}`);
  const chosen = [...new Set([typed[0], typed[typed.length >> 1], typed[typed.length - 1]])].filter(g => g !== undefined);
  for (const gc of chosen) {
    await checkHistogram(t, name, gc, dirs.get(gc));
    if (kv(cat(t, `gc/${dirs.get(gc)}/info`)).graph === 'yes')
      await checkGraph(t, name, gc, dirs.get(gc));
  }
  await checkTimeline(t, name);
  await checkAllocs(t, name);
}
await checkAcceptance();
await checkDocQueries();
await checkGrowth();
await checkSecondReader();
console.log(`# export-check: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
