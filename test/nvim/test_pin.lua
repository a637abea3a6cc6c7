-- `P` in :PiTree toggles the pin of the entry under the cursor: it writes a pin
-- (a custom entry, customType "pi-lsp/pin") and the tree marks the entry
-- "⚑ pinned"; `P` again unpins it. A previewed summary that drops the pinned
-- message asks (vim.ui.select) before committing: "Keep editing" writes nothing,
-- "Commit anyway" commits with acceptDroppedPins. After undoing that, :PiCompact
-- writes a summary that quotes the pinned message verbatim. (The runner then
-- loads the file in real Pi.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('pin', function()
  local session, done = T.start()
  local tree = require('pi_lsp.tree')
  local edit = require('pi_lsp.edit')

  vim.cmd('PiTree split')
  local ev = done.ok('pi.tree')
  local tbuf = vim.api.nvim_get_current_buf()
  local target = (T.tree_nodes(tbuf, function(node)
    return node.onPath and node.type == 'message' and node.role == 'user'
  end)[1] or {}).node
  T.ok(target, 'a user message on the path')
  T.ok(target.pinned ~= true, 'the target is not pinned yet')
  local by_id = T.by_id(T.read_session(session))
  local content = by_id[target.id].message.content
  local text = type(content) == 'string' and content or table.concat(vim.tbl_map(function(b)
    return b.text or ''
  end, vim.tbl_filter(function(b)
    return b.type == 'text'
  end, content)), '\n')
  T.info('pinning %s: %q', target.id, text)

  local function press_p()
    local lnum = T.ok(tree.line_of(tbuf, target.id), 'the target is in the tree')
    vim.api.nvim_set_current_win(require('pi_lsp.ui').buf_win(tbuf))
    vim.api.nvim_win_set_cursor(0, { lnum, 0 })
    vim.api.nvim_feedkeys('P', 'x', false)
    local pe = done.ok('pi.pin', 30000)
    return pe
  end
  local function wait_marker(want)
    return T.wait(10000, function()
      local lnum = tree.line_of(tbuf, target.id)
      local node = lnum and tree.node_at(tbuf, lnum)
      local line = lnum and vim.api.nvim_buf_get_lines(tbuf, lnum - 1, lnum, false)[1] or ''
      local has = line:find('⚑ pinned', 1, true) ~= nil
      if node and (node.pinned == true) == want and has == want then
        return line
      end
    end, 'the tree to show the entry ' .. (want and 'pinned' or 'unpinned'))
  end
  local function last_entry()
    local all = T.read_session(session)
    return all[#all]
  end

  -- Pin.
  local pe = press_p()
  T.eq({ target.id, true }, { pe.arguments.entryId, pe.arguments.pinned }, 'pin arguments')
  local pin = last_entry()
  T.eq({ 'custom', 'pi-lsp/pin', target.id, true }, { pin.type, pin.customType, pin.data.targetId, pin.data.pinned },
    'the pin entry')
  T.info('pinned: %s', wait_marker(true))
  -- Unpin, then pin again.
  pe = press_p()
  T.eq(false, pe.arguments.pinned, 'the second P unpins')
  T.eq({ 'pi-lsp/pin', target.id, false }, { last_entry().customType, last_entry().data.targetId, last_entry().data.pinned },
    'the unpin entry')
  wait_marker(false)
  pe = press_p()
  T.eq(true, pe.arguments.pinned, 'the third P pins again')
  wait_marker(true)
  T.ok(vim.api.nvim_buf_get_lines(tbuf, 1, 2, false)[1]:find('P pin', 1, true), 'the tree header lists P')

  -- A preview quotes the pinned message; an edit that drops it asks first.
  vim.cmd('PiPreview')
  ev = done.wait('pi.previewCompaction', 60000)
  T.ok(ev.error == nil and not ev.result.nothingToCompact, 'preview: %s', vim.inspect(ev.error or ev.result))
  T.eq({ text }, ev.result.pinned, 'pinned texts in the preview')
  local buf = vim.api.nvim_get_current_buf()
  T.ok(table.concat(edit.info(buf), '\n'):find('pinned', 1, true), 'the header mentions the pinned message')
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '## Goal', 'A summary without the pinned message.' })
  local n = #T.read_session(session)
  local answer = 'Keep editing'
  local asked = T.answer_select(function(it)
    return it == answer
  end)
  vim.cmd('write')
  local cm = done.wait('pi.commitCompaction', 30000)
  T.eq('pinnedDropped', require('pi_lsp.client').error_kind(cm.error), 'error kind of a summary without the pin')
  T.eq(1, #asked, 'asked whether to commit anyway')
  T.eq({ 'Commit anyway (drop the pinned messages)', 'Keep editing' }, asked[1].items, 'pinnedDropped choices')
  T.eq(n, #T.read_session(session), 'nothing written when the user keeps editing')
  T.ok(vim.bo[buf].modified, 'the buffer stays modified')

  answer = 'Commit anyway (drop the pinned messages)'
  vim.cmd('write')
  done.wait('pi.commitCompaction', 30000) -- pinnedDropped again
  cm = done.ok('pi.commitCompaction', 30000, 'commit anyway')
  T.eq(true, cm.arguments.acceptDroppedPins, 'acceptDroppedPins sent')
  T.wait(5000, function()
    return not vim.bo[buf].modified
  end, 'the buffer to be unmodified after the commit')
  local forced = last_entry()
  T.eq({ 'compaction', '## Goal\nA summary without the pinned message.' }, { forced.type, forced.summary },
    'the summary committed anyway')
  vim.cmd('bwipeout!')

  -- Undo it; :PiCompact quotes the pinned message.
  vim.cmd('PiUndoCompaction')
  ev = done.ok('pi.undoCompaction', 30000)
  vim.cmd('PiCompact')
  ev = done.wait('pi.compact', 60000)
  T.ok(ev.error == nil and ev.result.entry, 'pi.compact failed: %s', vim.inspect(ev.error or ev.result))
  local c = last_entry()
  T.eq('compaction', c.type, 'the last entry')
  local flat = text:gsub('\n', ' ')
  T.ok(c.summary:find(text, 1, true) or c.summary:find(flat, 1, true),
    'the compaction summary quotes the pinned message %q verbatim:\n%s', text, c.summary)
  T.info('summary:\n%s', c.summary)

  T.data.pi_check = { file = session, at = 'first', role = 'compactionSummary', summary = c.summary }
end)
