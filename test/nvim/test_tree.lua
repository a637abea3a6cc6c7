-- :PiTree shows the entry tree with the leaf marked; <CR> on an earlier entry
-- asks (vim.ui.select) how to navigate, and "Summarize" writes a branch
-- summary of the branch being left. (The runner then loads the file in real
-- Pi and checks that its context holds the branch summary.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('tree', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local progress = T.record_progress()
  local done = T.record_done()
  T.wait_client()
  local tree = require('pi_lsp.tree')

  vim.cmd('PiTree')
  local ev = done.ok('pi.tree')
  local buf = vim.api.nvim_get_current_buf()
  T.eq('pi://tree', vim.api.nvim_buf_get_name(buf), 'current buffer')
  T.ok(vim.api.nvim_win_get_config(0).relative ~= '', 'the tree opens in a floating window')
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  T.info('tree has %d lines; first entries:\n%s', #lines, table.concat(vim.list_slice(lines, 1, 12), '\n'))

  -- Every entry of the file is in the tree, exactly one of them the leaf.
  local entries = T.read_session(session)
  local on_path, leaf_lnum = {}, nil
  local count = 0
  for lnum = 1, #lines do
    local node = tree.node_at(buf, lnum)
    if node then
      count = count + 1
      if node.isLeaf then
        T.ok(leaf_lnum == nil, 'only one leaf')
        leaf_lnum = lnum
      end
      if node.onPath then
        on_path[#on_path + 1] = { lnum = lnum, node = node }
      end
    end
  end
  T.eq(#entries - 1, count, 'entries shown in the tree')
  T.ok(leaf_lnum, 'the leaf is marked')
  T.ok(lines[leaf_lnum]:find('← leaf', 1, true), 'leaf line %q carries the marker', lines[leaf_lnum])
  T.eq(leaf_lnum, vim.api.nvim_win_get_cursor(0)[1], 'cursor starts on the leaf')
  T.eq(ev.result.leafId, tree.node_at(buf, leaf_lnum).id, 'leaf id')

  -- Target: a message on the current path with at least two path entries after
  -- it (so there is a branch to summarize), an assistant message if possible,
  -- the one closest to the middle of the path.
  local target
  local mid = #on_path / 2
  for _, want_role in ipairs({ 'assistant', false }) do
    for i = 1, #on_path - 2 do
      local n = on_path[i].node
      if n.type == 'message' and (not want_role or n.role == want_role) then
        if not target or math.abs(i - mid) < math.abs(target.i - mid) then
          target = { i = i, lnum = on_path[i].lnum, node = n }
        end
      end
    end
    if target then
      break
    end
  end
  T.ok(target, 'a message on the path to navigate to (path has %d entries)', #on_path)
  T.info('navigating to %s (line %d)', target.node.id, target.lnum)

  local nav, asked = T.tree_enter(done, target.lnum, 'Summarize', 'pi.navigate')
  T.ok(asked.prompt:find(target.node.id, 1, true), 'the prompt names the target')
  T.ok(nav.error == nil, 'pi.navigate failed: %s', vim.inspect(nav.error))
  T.eq(target.node.id, nav.arguments.targetId, 'targetId sent')
  T.eq(true, nav.arguments.summarize, 'summarize sent')
  local se = nav.result.summaryEntry
  T.ok(type(se) == 'table' and se.type == 'branch_summary', 'summaryEntry in the result: %s', vim.inspect(nav.result))

  local seq = T.wait(10000, function()
    return T.progress_for(progress, 'Summarizing branch')
  end, 'progress begin/end titled "Summarizing branch"')
  T.eq('begin', seq[1].kind, 'first progress kind')

  local after = T.read_session(session)
  T.eq(#entries + 1, #after, 'entries in the session file')
  local last = after[#after]
  T.eq('branch_summary', last.type, 'type of the appended entry')
  T.eq(se.id, last.id, 'id of the appended entry')
  T.ok(type(last.summary) == 'string' and last.summary ~= '', 'the branch summary has text')
  T.eq(ev.result.leafId, last.fromId, 'fromId is the leaf navigated away from')

  -- The tree refreshes: the summary is the new leaf.
  T.wait(10000, function()
    local l = tree.line_of(buf, last.id)
    return l and tree.node_at(buf, l).isLeaf
  end, 'the tree to show the branch summary as the leaf')

  T.data.pi_check = { file = session, at = 'last', role = 'branchSummary', summary = last.summary }
end)
