// node tests/ci/test_post_comment.js SCRIPTS_CI_DIR WORK_DIR
// scripts/ci/post-comment.js against a fake GitHub API: which pull request a workflow_run
// comment goes to (the event's own; a fork's number from the artifact only when that pull
// request's head is the commit the run proved), the marker check, update versus create.
// Exit 0 when every case holds, 1 otherwise.
'use strict';
const fs = require('fs');
const path = require('path');
const post = require(path.resolve(process.argv[2], 'post-comment.js'));
const work = process.argv[3];
fs.mkdirSync(work, { recursive: true });

const HEAD = 'a'.repeat(40);
let failures = 0;

function fake(prs, comments) {
  const calls = [];
  const github = {
    paginate: async (fn, args) => (await fn(args)).data,
    rest: {
      pulls: { get: async ({ pull_number }) => {
        if (!(pull_number in prs)) throw new Error(`no pull request #${pull_number}`);
        return { data: { number: pull_number, head: { sha: prs[pull_number] } } };
      } },
      issues: {
        listComments: async ({ issue_number }) => ({ data: comments[issue_number] || [] }),
        updateComment: async (a) => { calls.push(['update', a.comment_id]); },
        createComment: async (a) => { calls.push(['create', a.issue_number]); },
      },
    },
  };
  return { github, calls };
}

function write(name, text) {
  const p = path.join(work, name);
  fs.writeFileSync(p, text);
  return p;
}

async function expect(what, { event, payload, prs = {}, comments = {}, body, number, want, throws }) {
  const { github, calls } = fake(prs, comments);
  const context = { eventName: event, payload, repo: { owner: 'o', repo: 'r' } };
  const core = { notice: () => {} };
  let error = null;
  try {
    await post({ github, context, core, bodyFile: write('comment.md', body),
                 numberFile: number === undefined ? path.join(work, 'none') : write('pr-number', number) });
  } catch (e) {
    error = e.message;
  }
  const got = JSON.stringify(calls);
  const ok = throws ? error !== null && error.includes(throws) && calls.length === 0
                    : error === null && got === JSON.stringify(want);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok ? '' : `: calls ${got}, error ${error}`}`);
  if (!ok) failures += 1;
}

const BODY = '<!-- bitproof:bitproof/proofs -->\n## bitproof: all hold\n';
const run = (extra) => ({ workflow_run: Object.assign({ event: 'pull_request', head_sha: HEAD, pull_requests: [] }, extra) });

(async () => {
  await expect('a pull request of this repository: the event names it', {
    event: 'workflow_run', payload: run({ pull_requests: [{ number: 7, head: { sha: HEAD } }] }), body: BODY,
    want: [['create', 7]] });
  await expect('a fork: the artifact\'s number, its head the run\'s commit', {
    event: 'workflow_run', payload: run(), prs: { 9: HEAD }, body: BODY, number: '9\n', want: [['create', 9]] });
  await expect('a fork: the artifact names another pull request (negative control)', {
    event: 'workflow_run', payload: run(), prs: { 9: HEAD, 10: 'b'.repeat(40) }, body: BODY, number: '10',
    throws: 'not at' });
  await expect('a number that is not a number', {
    event: 'workflow_run', payload: run(), prs: { 9: HEAD }, body: BODY, number: '9; rm -rf /', throws: 'not a pull request number' });
  await expect('no number at all', { event: 'workflow_run', payload: run(), body: BODY, throws: 'not a pull request number' });
  await expect('a body without the marker', {
    event: 'workflow_run', payload: run({ pull_requests: [{ number: 7, head: { sha: HEAD } }] }),
    body: '## bitproof: all hold\n', throws: 'marker' });
  await expect('the run was a push: nothing posted', {
    event: 'workflow_run', payload: run({ event: 'push' }), body: BODY, want: [] });
  await expect('the comment is there: updated, found by its marker', {
    event: 'workflow_run', payload: run({ pull_requests: [{ number: 7, head: { sha: HEAD } }] }), body: BODY,
    comments: { 7: [{ id: 1, user: { type: 'User' }, body: BODY }, { id: 2, user: { type: 'Bot' }, body: 'x' },
                    { id: 3, user: { type: 'Bot' }, body: BODY + 'old' }] },
    want: [['update', 3]] });
  await expect('in the proving job (pull_request)', {
    event: 'pull_request', payload: { pull_request: { number: 5 } }, body: BODY, want: [['create', 5]] });
  console.log(`${failures} failure(s)`);
  process.exit(failures ? 1 : 0);
})();
