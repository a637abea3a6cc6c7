-- :PiCompact focus on tests -> work-done progress begin/end through Neovim's
-- own LspProgress, and a compaction entry appended to the session file.
-- (The runner then loads the file in real Pi and checks that the context
-- starts with the compaction summary.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('compact', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local progress = T.record_progress()
  local events = T.record_events({ 'PiCompactionStart', 'PiCompactionEnd', 'PiSessionChanged', 'PiContextUsage' })
  local done = T.record_done()
  local client = T.wait_client()
  T.info('client %d attached, root %s', client.id, tostring(client.root_dir))
  T.eq(vim.env.PI_NVIM_WORKSPACE, client.root_dir, 'client root_dir')
  T.ok(vim.list_contains(client.server_capabilities.executeCommandProvider.commands, 'pi.compact'),
    'the server announces pi.compact')

  local before = T.read_session(session)
  vim.cmd('PiCompact focus on tests')
  local ev = done.ok('pi.compact', 60000)
  local result = ev.result
  T.ok(type(result) == 'table' and not result.nothingToCompact,
    'expected a compaction, got %s', vim.inspect(result))
  T.eq('compaction', result.entry.type, 'result.entry.type')
  T.ok(type(result.tokensBefore) == 'number' and type(result.tokensAfter) == 'number', 'token counts in the result')
  T.eq({ 'focus on tests' }, { ev.arguments.instructions }, 'instructions sent')

  -- Progress through Neovim's $/progress handler.
  local seq = T.wait(10000, function()
    return T.progress_for(progress, 'Compacting session')
  end, 'progress begin/end titled "Compacting session"')
  T.eq('begin', seq[1].kind, 'first progress kind')
  T.eq(0, seq[1].percentage, 'first progress percentage')
  T.eq('end', seq[#seq].kind, 'last progress kind')
  T.info('progress: %s', table.concat(vim.tbl_map(function(p)
    return p.kind
  end, seq), ','))

  -- The session file gained exactly the compaction entry.
  local after = T.read_session(session)
  T.eq(#before + 1, #after, 'entries in the session file')
  local last = after[#after]
  T.eq('compaction', last.type, 'type of the appended entry')
  T.eq(result.entry.id, last.id, 'id of the appended entry')
  T.ok(type(last.summary) == 'string' and last.summary ~= '', 'the entry has a summary')
  T.ok(type(last.firstKeptEntryId) == 'string', 'the entry has firstKeptEntryId')

  -- pi/compactionStart and pi/compactionEnd (manual), then pi/sessionChanged
  -- with the new leaf and pi/contextUsage, which feeds the statusline.
  T.wait(10000, function()
    return #events.PiCompactionEnd > 0
  end, 'pi/compactionEnd')
  T.eq('manual', (events.PiCompactionStart[1] or {}).reason, 'pi/compactionStart reason')
  local ce = events.PiCompactionEnd[1]
  T.eq({ 'manual', false, session }, { ce.reason, ce.aborted, ce.session }, 'pi/compactionEnd reason, aborted, session')
  T.wait(10000, function()
    for _, e in ipairs(events.PiSessionChanged) do
      if e.leafId == last.id and e.session == session then
        return true
      end
    end
  end, 'pi/sessionChanged with the compaction as the leaf')
  local usage = T.wait(10000, function()
    return events.PiContextUsage[#events.PiContextUsage]
  end, 'pi/contextUsage')
  T.eq(session, usage.session, 'pi/contextUsage session')
  local human = require('pi_lsp.ui').human
  local line
  if type(usage.tokens) == 'number' then
    local want = ('Pi %s/%s ('):format(human(usage.tokens), human(usage.contextWindow))
    line = T.wait(5000, function()
      -- (Markers such as " · 1 stale" may follow the usage.)
      local s = require('pi_lsp').statusline():gsub(' · .*$', '')
      return vim.startswith(s, want) and s:match('%(%d+%%%)$') and s
    end, 'the statusline to show ' .. want .. '…')
  else
    -- Pi has no figure until the next reply (getContextUsage after a compaction): the
    -- server sends Pi's estimate, and the statusline shows it marked "~", never "?".
    T.ok(type(usage.estimate) == 'number' and usage.source == 'estimate', 'an estimate after the compaction: %s', vim.inspect(usage))
    local want = ('Pi ~%s/%s'):format(human(usage.estimate), human(usage.contextWindow))
    line = T.wait(5000, function()
      local s = require('pi_lsp').statusline():gsub(' · .*$', '')
      return s == want and s
    end, 'the statusline to show ' .. want)
  end
  T.info('statusline: %s (pi/contextUsage %s)', line, vim.inspect(usage))

  T.data.pi_check = { file = session, at = 'first', role = 'compactionSummary', summary = last.summary }
end)
