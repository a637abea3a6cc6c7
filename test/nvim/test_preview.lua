-- :PiPreview opens the compaction summary (pi/previewCompaction) in an acwrite
-- buffer; after an edit, :w commits it (pi/commitCompaction): the session's last
-- entry is a compaction whose summary is the edited buffer text, with
-- details.edited. A second :w does not write again. Before that, :PiCompact!
-- previews too, and its :w after the session changed is refused
-- (sessionChanged) without writing. (The runner then loads the file in real Pi.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('preview', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local done = T.record_done()
  local committed = T.record_events({ 'PiSummaryCommitted' })
  T.wait_client()
  local edit = require('pi_lsp.edit')
  local notes = T.record_notify()

  -- :PiCompact! previews; after the session changed, :w is refused.
  local sid = edit.session_id(session)
  local leaf0 = T.read_session(session)
  vim.cmd('PiContextInfo')
  local ctx = done.wait('pi.context')
  local old_leaf = ctx.result.leafId
  local target
  for _, e in ipairs(leaf0) do
    if e.type == 'message' and e.message.role == 'assistant' and e.id ~= old_leaf then
      target = e.id
    end
  end
  vim.cmd('PiCompact! keep the tests in mind')
  local ev = done.ok('pi.previewCompaction', 60000, 'preview (bang)')
  T.eq('keep the tests in mind', ev.arguments.instructions, 'instructions sent')
  T.ok(not ev.result.nothingToCompact, 'a preview: %s', vim.inspect(ev.result))
  local buf = vim.api.nvim_get_current_buf()
  T.eq('pi://compaction/' .. sid, vim.api.nvim_buf_get_name(buf), 'preview buffer (bang)')
  -- Change the session under the preview: move the leaf to an earlier entry.
  vim.cmd('PiNavigate ' .. target .. ' none')
  local nav = done.wait('pi.navigate', 30000)
  T.ok(nav.error == nil, 'navigate away: %s', vim.inspect(nav.error))
  local n = #T.read_session(session)
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_buf_set_lines(buf, 0, 0, false, { 'Edited after the session changed.' })
  -- The refusal is an error message, which makes :w fail.
  local wok, werr = pcall(vim.cmd, 'write')
  T.ok(not wok and tostring(werr):find('PiPreview again', 1, true), ':w fails telling to preview again: %s', tostring(werr))
  local cm = done.wait('pi.commitCompaction', 30000)
  T.eq('sessionChanged', require('pi_lsp.client').error_kind(cm.error), 'error kind of a stale commit')
  T.eq(n, #T.read_session(session), 'nothing written by a stale commit')
  T.ok(vim.bo[buf].modified, 'the buffer stays modified')
  T.ok(T.noted(notes, 'PiPreview again'), 'the user is told to preview again')
  vim.cmd('bwipeout!')
  -- Back to the old leaf.
  vim.cmd('PiNavigate ' .. old_leaf .. ' none')
  nav = done.wait('pi.navigate', 30000)
  T.ok(nav.error == nil, 'navigate back: %s', vim.inspect(nav.error))

  local before = T.read_session(session)
  vim.cmd('PiPreview')
  ev = done.ok('pi.previewCompaction', 60000)
  local pv = ev.result
  T.ok(type(pv) == 'table' and not pv.nothingToCompact and type(pv.spanKey) == 'string',
    'a preview with a spanKey: %s', vim.inspect(pv))
  T.eq(#before, #T.read_session(session), 'entries after the preview (nothing written)')

  buf = vim.api.nvim_get_current_buf()
  T.eq('pi://compaction/' .. sid, vim.api.nvim_buf_get_name(buf), 'preview buffer name')
  T.eq({ 'acwrite', 'markdown', false }, { vim.bo[buf].buftype, vim.bo[buf].filetype, vim.bo[buf].modified },
    'buftype, filetype, modified')
  T.eq(pv.summary, edit.text(buf), 'the buffer holds the previewed summary')
  local info = table.concat(edit.info(buf), '\n')
  T.info('info:\n%s', info)
  T.ok(info:find(require('pi_lsp.ui').human(pv.tokensBefore), 1, true) and info:find(':w commits', 1, true),
    'the virtual header tells the tokens and that :w commits: %s', info)
  -- The coverage: how many of the range's critical entities the summary carries.
  local cov = pv.coverage
  T.ok(type(cov) == 'table' and type(cov.entities) == 'table' and type(cov.missing) == 'table',
    'the preview has its coverage: %s', vim.inspect(cov))
  if #cov.entities > 0 then
    local want = ('carries %d of %d critical entities'):format(#cov.entities - #cov.missing, #cov.entities)
    T.ok(info:find(want, 1, true), 'the header tells the coverage (%s): %s', want, info)
  end
  local marks = vim.api.nvim_buf_get_extmarks(buf, -1, 0, -1, { details = true })
  T.ok(#marks > 0 and marks[1][4].virt_lines, 'virtual lines above the text')

  -- Edit: append a line, then :w.
  vim.api.nvim_buf_set_lines(buf, -1, -1, false, { '', 'Keep the CLI flags stable.' })
  T.ok(vim.bo[buf].modified, 'modified after the edit')
  local text = edit.text(buf)
  vim.cmd('write')
  -- :w waits for the answer, so :wq and :x work.
  T.eq(false, vim.bo[buf].modified, 'unmodified when :w returns')
  cm = done.ok('pi.commitCompaction', 30000)
  T.eq({ text, pv.spanKey }, { cm.arguments.summary, cm.arguments.spanKey }, 'summary and spanKey sent')
  T.eq(false, vim.bo[buf].modified, 'unmodified after :w')
  T.eq(1, #committed.PiSummaryCommitted, 'PiSummaryCommitted events')

  local after, last = T.expect_edited_summary(session, #before, 'compaction', text)
  T.eq(pv.firstKeptEntryId, last.firstKeptEntryId, 'firstKeptEntryId as previewed')
  T.eq(cm.result.entry.id, last.id, 'entry id in the result')
  T.ok(last.summary:find('Keep the CLI flags stable.', 1, true), 'the added line is in the summary')

  -- A second :w writes nothing.
  vim.cmd('write')
  T.eq(#after, #T.read_session(session), 'entries after a second :w')
  T.ok(T.noted(notes, 'already committed'), 'a second :w says the summary is already committed')
  vim.cmd('bwipeout!')

  T.data.pi_check = { file = session, at = 'first', role = 'compactionSummary', summary = last.summary }
end)
