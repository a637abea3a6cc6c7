-- :PiTree, <CR> on an earlier entry, "Summarize and edit…": the branch summary
-- (pi/previewBranchSummary) opens in an acwrite buffer, nothing written yet;
-- after an edit, :w navigates with summarize=true and the edited text
-- (pi/navigate `summary`): the last entry is a branch_summary with that text
-- and details.edited. Before that, :PiNavigate {id} edit opens the same kind
-- of buffer, and a :w after the session's leaf moved asks first ("Keep
-- editing" writes nothing). (The runner then loads the file in real Pi.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('branch_edit', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local done = T.record_done()
  T.wait_client()
  local edit = require('pi_lsp.edit')

  -- First :PiNavigate {id} edit, and a leaf that moves before :w: asked
  -- (vim.ui.select) before writing; "Keep editing" writes nothing.
  vim.cmd('PiContextInfo')
  local leaf0 = done.wait('pi.context').result.leafId
  local assistants = {}
  for _, e in ipairs(T.read_session(session)) do
    if e.type == 'message' and e.message.role == 'assistant' and e.id ~= leaf0 then
      assistants[#assistants + 1] = e.id
    end
  end
  vim.cmd('PiNavigate ' .. assistants[1] .. ' edit')
  local pv0 = done.ok('pi.previewBranchSummary', 60000, 'preview (:PiNavigate edit)')
  local buf0 = vim.api.nvim_get_current_buf()
  T.eq(('pi://branch-summary/%s/%s'):format(edit.session_id(session), assistants[1]), vim.api.nvim_buf_get_name(buf0),
    ':PiNavigate edit buffer')
  vim.cmd('PiNavigate ' .. assistants[#assistants] .. ' none')
  T.ok(done.wait('pi.navigate', 30000).error == nil, 'moving the leaf')
  local n0 = #T.read_session(session)
  vim.api.nvim_set_current_buf(buf0)
  vim.api.nvim_buf_set_lines(buf0, 0, 0, false, { 'Edited while the leaf moved.' })
  local moved_asked = T.answer_select('Keep editing')
  vim.cmd('write')
  T.eq(1, #moved_asked, 'asked before writing a summary of a branch that moved')
  T.eq({ 'Navigate and write it anyway', 'Keep editing' }, moved_asked[1].items, 'choices when the leaf moved')
  T.info('asked: %s', moved_asked[1].prompt)
  T.eq(n0, #T.read_session(session), 'nothing written when the user keeps editing')
  T.ok(vim.bo[buf0].modified, 'the buffer stays modified')
  vim.cmd('bwipeout!')
  vim.cmd('PiNavigate ' .. leaf0 .. ' none')
  T.ok(done.wait('pi.navigate', 30000).error == nil, 'moving the leaf back')

  vim.cmd('PiTree')
  local ev = done.ok('pi.tree')
  local tbuf = vim.api.nvim_get_current_buf()
  local old_leaf = ev.result.leafId

  -- An assistant message on the path, two or more entries before the leaf.
  local path = T.tree_nodes(tbuf, function(node)
    return node.onPath
  end)
  local target
  for i = 1, #path - 2 do
    local n = path[i].node
    if n.type == 'message' and n.role == 'assistant' then
      target = path[i]
    end
  end
  T.ok(target, 'an assistant message on the path (%d entries)', #path)
  T.info('target %s (line %d), leaf %s', target.node.id, target.lnum, tostring(old_leaf))

  local entries = T.read_session(session)
  local pv = T.tree_enter(done, target.lnum, 'Summarize and edit…', 'pi.previewBranchSummary')
  T.ok(pv.error == nil, 'pi/previewBranchSummary failed: %s', vim.inspect(pv.error))
  T.eq(target.node.id, pv.arguments.targetId, 'targetId sent')
  T.ok(type(pv.result.summary) == 'string' and pv.result.summary ~= '', 'a summary: %s', vim.inspect(pv.result))
  T.eq(#entries, #T.read_session(session), 'nothing written by the preview')

  local buf = vim.api.nvim_get_current_buf()
  T.eq(('pi://branch-summary/%s/%s'):format(edit.session_id(session), target.node.id), vim.api.nvim_buf_get_name(buf),
    'summary buffer name')
  T.eq({ 'acwrite', 'markdown', false }, { vim.bo[buf].buftype, vim.bo[buf].filetype, vim.bo[buf].modified },
    'buftype, filetype, modified')
  T.eq('', vim.api.nvim_win_get_config(0).relative, 'the summary is in an ordinary window')
  T.eq(pv.result.summary, edit.text(buf), 'the buffer holds the previewed summary')
  T.ok(table.concat(edit.info(buf), '\n'):find(':w commits', 1, true), 'the header says :w commits')

  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '', 'Keep the CLI flags stable.' })
  local text = edit.text(buf)
  vim.cmd('write')
  T.eq(false, vim.bo[buf].modified, 'unmodified when :w returns')
  local nav = done.ok('pi.navigate', 30000)
  T.eq({ target.node.id, true, text }, { nav.arguments.targetId, nav.arguments.summarize, nav.arguments.summary },
    'targetId, summarize, summary sent')

  local _, last = T.expect_edited_summary(session, #entries, 'branch_summary', text)
  T.eq(target.node.id, last.parentId, 'the summary hangs below the target')
  T.eq(old_leaf, last.fromId, 'fromId is the leaf navigated away from')
  T.eq(nav.result.summaryEntry.id, last.id, 'summaryEntry in the result')

  T.data.pi_check = { file = session, at = 'last', role = 'branchSummary', summary = last.summary }
end)
