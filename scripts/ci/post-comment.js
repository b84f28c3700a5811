// Posts or updates bitproof's sticky PR comment (actions/github-script, from action.yml's
// comment step and from comment/action.yml). It reads a file someone else wrote and posts it
// as text: it runs nothing of a pull request's. The body's first line is its marker
// <!-- bitproof:KEY -->, by which the comment is found again and updated in place.
//
// The pull request: the event's own (pull_request), or for a workflow_run the run's
// pull request: the event lists it for pull requests of this repository; for one from a
// fork the number comes from the reports artifact (pr-number) and is believed only when that
// pull request's head commit is the commit the run proved (github.event.workflow_run.head_sha).
module.exports = async ({ github, context, core, bodyFile, numberFile }) => {
  const fs = require('fs');
  const body = fs.readFileSync(bodyFile, 'utf8');
  const marker = body.split('\n', 1)[0];
  if (!/^<!-- bitproof:[^<>]{1,200} -->$/.test(marker) || !body.startsWith(marker)) {
    throw new Error(`${bodyFile}: the first line is not a bitproof marker <!-- bitproof:KEY -->`);
  }
  if (body.length > 65536) throw new Error(`${bodyFile}: ${body.length} characters, more than a comment holds`);
  const { owner, repo } = context.repo;
  let issue_number;
  if (context.eventName === 'workflow_run') {
    const run = context.payload.workflow_run;
    if (run.event !== 'pull_request') {
      core.notice(`the run was for a ${run.event} event, not a pull request: no comment`);
      return;
    }
    const listed = (run.pull_requests || []).find(p => p.head && p.head.sha === run.head_sha);
    if (listed) {
      issue_number = listed.number;
    } else {
      const text = numberFile && fs.existsSync(numberFile) ? fs.readFileSync(numberFile, 'utf8').trim() : '';
      if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new Error(`${numberFile}: not a pull request number`);
      const { data: pr } = await github.rest.pulls.get({ owner, repo, pull_number: Number(text) });
      if (pr.head.sha !== run.head_sha) {
        throw new Error(`pull request #${text} is at ${pr.head.sha}, not at ${run.head_sha} that the run proved: no comment`);
      }
      issue_number = pr.number;
    }
  } else if (context.payload.pull_request) {
    issue_number = context.payload.pull_request.number;
  } else {
    core.notice(`a ${context.eventName} event has no pull request: no comment`);
    return;
  }
  const comments = await github.paginate(github.rest.issues.listComments, { owner, repo, issue_number, per_page: 100 });
  const mine = comments.find(c => c.user && c.user.type === 'Bot' && (c.body || '').startsWith(marker));
  if (mine) {
    await github.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body });
  } else {
    await github.rest.issues.createComment({ owner, repo, issue_number, body });
  }
};
