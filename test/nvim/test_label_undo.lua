-- :PiLabel writes a label entry (shown in :PiTree), :PiLabel without text
-- clears it, and :PiUndoCompaction undoes a :PiCompact.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('label_undo', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local done = T.record_done()
  T.wait_client()
  local entries = T.read_session(session)
  local target
  for _, e in ipairs(entries) do
    if e.type == 'message' and e.message and e.message.role == 'user' then
      target = e.id
      break
    end
  end
  T.ok(target, 'a user message to label')

  vim.cmd('PiLabel ' .. target .. ' checkpoint one')
  local ev = done.ok('pi.label')
  local after = T.read_session(session)
  local last = after[#after]
  T.eq({ 'label', target, 'checkpoint one' }, { last.type, last.targetId, last.label }, 'label entry')

  vim.cmd('PiTree split')
  done.wait('pi.tree')
  local tree = require('pi_lsp.tree')
  local buf = vim.api.nvim_get_current_buf()
  local lnum = T.ok(tree.line_of(buf, target), 'the labelled entry is in the tree')
  local line = vim.api.nvim_buf_get_lines(buf, lnum - 1, lnum, false)[1]
  T.ok(line:find('[checkpoint one]', 1, true), 'the tree shows the label: %q', line)
  vim.cmd('wincmd p')

  vim.cmd('PiLabel ' .. target)
  ev = done.ok('pi.label', nil, 'pi.label (clear)')
  after = T.read_session(session)
  last = after[#after]
  T.eq('label', last.type, 'clearing appends a label entry')
  T.ok(last.label == nil or last.label == '', 'the clearing label entry has no text: %s', vim.inspect(last.label))

  vim.cmd('PiCompact')
  ev = done.wait('pi.compact', 60000)
  T.ok(ev.error == nil and ev.result.entry, 'pi.compact failed: %s', vim.inspect(ev.error or ev.result))
  local compaction = ev.result.entry.id

  vim.cmd('PiUndoCompaction')
  ev = done.ok('pi.undoCompaction', 30000)
  T.eq(compaction, ev.result.compactionId, 'compactionId of the undone compaction')
  T.ok(type(ev.result.leafId) == 'string', 'leafId after undo')

  vim.cmd('PiContextInfo')
  ev = done.ok('pi.context')
  local lc = ev.result.lastCompaction
  T.ok(lc == nil or lc == vim.NIL or lc.id ~= compaction, 'the undone compaction is not in the context any more')
end)
