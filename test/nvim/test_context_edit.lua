-- x / e / u in :PiTree hide a message from the LLM context, replace its content
-- there (vim.ui.input) and restore it: each writes Pi 1.6.0's context_edit entry
-- (replacement null; {content}; the original content), the tree marks the
-- message "⊘ hidden" / "✎ replaced" and then not at all, and :PiContextBySize
-- lists the context largest first with the hidden message marked. The runner
-- then loads the file in real Pi 1.6.0: its context lacks the hidden tool
-- result, carries the replacement text and the restored message's original text.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

local text_of = T.text_of

T.run('context_edit', function()
  local session, done = T.start()
  local tree = require('pi_lsp.tree')
  local ui = require('pi_lsp.ui')

  local entries = T.read_session(session)
  local by_id, count = {}, {}
  for _, e in ipairs(entries) do
    if e.id then
      by_id[e.id] = e
    end
    if e.type == 'message' then
      local t = text_of(e.message.content)
      count[t] = (count[t] or 0) + 1
    end
  end

  vim.cmd('PiTree split')
  local ev = done.ok('pi.tree')
  local tbuf = vim.api.nvim_get_current_buf()
  -- Targets on the path: a tool result with a text of its own, a user message, an
  -- assistant message with text.
  local hide, replace, restore
  for lnum = 1, vim.api.nvim_buf_line_count(tbuf) do
    local node = tree.node_at(tbuf, lnum)
    if node and tree.editable(node) then
      local t = text_of(by_id[node.id].message and by_id[node.id].message.content)
      if not hide and node.role == 'toolResult' and #t >= 4 and count[t] == 1 then
        hide = node
      elseif not replace and node.role == 'user' then
        replace = node
      elseif not restore and node.role == 'assistant' and t ~= '' and count[t] == 1 then
        restore = node
      end
    end
  end
  T.ok(hide and replace and restore, 'targets on the path: %s %s %s', hide and hide.id, replace and replace.id, restore and restore.id)
  local hidden_text = text_of(by_id[hide.id].message.content)
  local restored_text = text_of(by_id[restore.id].message.content)
  local replacement = 'REPLACED from the Neovim tree'

  local function last_entry()
    local all = T.read_session(session)
    return all[#all]
  end
  local function press(key, id)
    local lnum = T.ok(tree.line_of(tbuf, id), '%s is in the tree', id)
    vim.api.nvim_set_current_win(ui.buf_win(tbuf))
    vim.api.nvim_win_set_cursor(0, { lnum, 0 })
    vim.api.nvim_feedkeys(key, 'x', false)
    local e = done.ok('pi.editContext', 30000)
    T.eq(id, e.arguments.entryId, 'edit target')
    T.ok(type(e.result.tokensBefore) == 'number' and type(e.result.tokensAfter) == 'number', 'token figures: %s', vim.inspect(e.result))
    local entry = last_entry()
    T.eq({ 'context_edit', id }, { entry.type, entry.targetId }, 'the entry written')
    T.eq(e.result.entry.id, entry.id, 'the answer is the entry written')
    return entry, e
  end
  local function wait_mark(id, mark)
    return T.wait(10000, function()
      local lnum = tree.line_of(tbuf, id)
      local line = lnum and vim.api.nvim_buf_get_lines(tbuf, lnum - 1, lnum, false)[1] or ''
      local has_hidden, has_replaced = line:find('⊘ hidden', 1, true) ~= nil, line:find('✎ replaced', 1, true) ~= nil
      if (mark == 'hidden') == has_hidden and (mark == 'replaced') == has_replaced then
        return line
      end
    end, ('the tree to show %s %s'):format(id, mark or 'unedited'))
  end

  -- x: hide the tool result.
  local entry = press('x', hide.id)
  T.eq(vim.NIL, entry.replacement, 'an omission stores replacement null')
  T.info('hidden: %s', wait_mark(hide.id, 'hidden'))

  -- e: replace the user message (its string stays a string).
  local orig_input = vim.ui.input
  vim.ui.input = function(opts, cb)
    T.ok(opts.prompt:find(replace.id, 1, true), 'the prompt names the entry: %s', opts.prompt)
    cb(replacement)
  end
  entry = press('e', replace.id)
  vim.ui.input = orig_input
  T.eq(replacement, entry.replacement.content, 'the replacement content')
  T.info('replaced: %s', wait_mark(replace.id, 'replaced'))

  -- x then u: hide the assistant message and restore it (the original content back).
  press('x', restore.id)
  wait_mark(restore.id, 'hidden')
  entry = press('u', restore.id)
  T.ok(vim.deep_equal(by_id[restore.id].message.content, entry.replacement.content), 'restore stores the original content: %s',
    vim.inspect(entry.replacement))
  T.info('restored: %s', wait_mark(restore.id, nil))

  -- A usage error writes nothing.
  local size = #T.read_session(session)
  local ok, msg = pcall(vim.cmd, 'PiEditContext ' .. hide.id .. ' delete')
  T.ok(ok or tostring(msg):find('usage', 1, true), 'a usage message: %s', tostring(msg))
  T.eq(size, #T.read_session(session), 'a bad action writes nothing')

  -- :PiContextBySize: largest first, the hidden one marked.
  vim.cmd('PiContextBySize')
  ev = done.wait('pi.contextBySize', 30000)
  T.ok(ev.error == nil and ev.bufnr, 'pi.contextBySize failed: %s', vim.inspect(ev.error))
  local cs = require('pi_lsp.context_size')
  local lines = vim.api.nvim_buf_get_lines(ev.bufnr, 0, -1, false)
  T.ok(lines[1]:find('Pi context by size', 1, true), 'header: %s', lines[1])
  local prev
  for _, m in ipairs(ev.result.messages) do
    if prev then
      T.ok(m.tokens <= prev, 'largest first: %d after %d', m.tokens, prev)
    end
    prev = m.tokens
  end
  local hl = T.ok(cs.line_of(ev.bufnr, hide.id), 'the hidden tool result is listed')
  T.ok(lines[hl]:find('⊘ hidden', 1, true), 'the listing marks it hidden: %s', lines[hl])
  local rl = T.ok(cs.line_of(ev.bufnr, replace.id), 'the replaced message is listed')
  T.ok(lines[rl]:find('✎ replaced', 1, true), 'the listing marks it replaced: %s', lines[rl])

  T.data.pi_check = { file = session, at = 'last', lacks = { hidden_text }, has = { replacement, restored_text } }
end)
