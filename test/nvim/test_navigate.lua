-- :PiNavigate {id} none moves the leaf without writing; :PiNavigate {id}
-- summarize {instructions} writes a branch summary with those instructions.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('navigate', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local done = T.record_done()
  T.wait_client()

  vim.cmd('PiContextInfo')
  local ctx = done.ok('pi.context')
  local old_leaf = ctx.result.leafId

  -- Two assistant messages on the current path, not the leaf.
  local entries = T.read_session(session)
  local by_id = {}
  for _, e in ipairs(entries) do
    if e.id then
      by_id[e.id] = e
    end
  end
  local path = {}
  local id = old_leaf
  while id and by_id[id] do
    table.insert(path, 1, by_id[id])
    id = by_id[id].parentId
  end
  local assistants = {}
  for i = 1, #path - 1 do
    local e = path[i]
    if e.type == 'message' and e.message.role == 'assistant' then
      assistants[#assistants + 1] = e.id
    end
  end
  T.ok(#assistants >= 2, 'two assistant messages on the path (%d)', #assistants)
  local first, second = assistants[1], assistants[#assistants]

  vim.cmd('PiNavigate ' .. second .. ' none')
  local nav = done.ok('pi.navigate', 30000)
  T.eq({ second, false }, { nav.arguments.targetId, nav.arguments.summarize }, 'arguments sent')
  T.ok(nav.result.summaryEntry == nil or nav.result.summaryEntry == vim.NIL, 'no summary entry')
  -- The new leaf is the target itself, or (so that Pi, whose leaf is the last
  -- entry of the file, sees the move) a marker entry appended below it that
  -- is not part of the LLM context.
  local moved = T.read_session(session)
  if nav.result.leafId ~= second then
    T.eq(#entries + 1, #moved, 'entries after navigating without summary')
    local marker = moved[#moved]
    T.eq({ nav.result.leafId, second }, { marker.id, marker.parentId }, 'the marker entry (id, parentId)')
    T.ok(marker.type == 'custom' or marker.type == 'label', 'the marker stays out of the context: %s', marker.type)
    T.info('navigation marker: %s', vim.json.encode(marker))
  else
    T.eq(#entries, #moved, 'entries after navigating without summary')
  end
  entries = moved

  vim.cmd('PiContextInfo')
  ctx = done.wait('pi.context')
  T.eq(nav.result.leafId, ctx.result.leafId, 'pi.context leaf after navigating')

  vim.cmd('PiNavigate ' .. first .. ' summarize focus on the files')
  nav = done.ok('pi.navigate', 60000, 'pi.navigate (summarize)')
  T.eq({ first, true, 'focus on the files' }, { nav.arguments.targetId, nav.arguments.summarize, nav.arguments.instructions },
    'arguments sent')
  local se = nav.result.summaryEntry
  T.ok(type(se) == 'table' and se.type == 'branch_summary', 'summary entry: %s', vim.inspect(nav.result))
  local after = T.read_session(session)
  T.eq(#entries + 1, #after, 'entries after navigating with a summary')
  T.eq(se.id, after[#after].id, 'the appended entry')
  T.eq(first, after[#after].parentId, 'the summary hangs below the target')

  -- A bad id is reported as an error, not a hang.
  vim.cmd('PiNavigate 00000000 none')
  nav = done.wait('pi.navigate', 30000)
  T.ok(nav.error ~= nil, 'navigating to an unknown id fails')
  T.info('unknown id: %s', require('pi_lsp.client').format_error(nav.error))

  T.data.pi_check = { file = session, at = 'last', role = 'branchSummary', summary = after[#after].summary }
end)
