-- :PiCancel cancels a running compaction through window/workDoneProgress/cancel:
-- the command answers with a "cancelled" error, pi/compactionEnd says
-- aborted, and nothing is written. The summarizer is an OpenAI-compatible
-- endpoint that this Neovim itself serves on 127.0.0.1 and never answers.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')
local uv = vim.uv or vim.loop

T.run('cancel', function()
  local session = assert(vim.env.PI_NVIM_SESSION)

  -- A silent "LLM": accepts connections, reads requests, never replies.
  vim.lsp.set_log_level(vim.env.PI_NVIM_LSP_LOG or 'warn')
  local server = uv.new_tcp()
  server:bind('127.0.0.1', 0)
  local conns = {}
  server:listen(16, function(err)
    assert(not err, err)
    local c = uv.new_tcp()
    server:accept(c)
    conns[#conns + 1] = c
    c:read_start(function() end)
  end)
  local port = server:getsockname().port
  T.info('silent summarizer endpoint on 127.0.0.1:%d', port)

  -- Restart the client with the OpenAI-compatible summarizer.
  local first = T.wait_client()
  if vim.fn.has('nvim-0.11') == 1 then
    first:stop()
  else
    first.stop()
  end
  T.wait(10000, function()
    return #vim.lsp.get_clients({ name = 'pi_lsp' }) == 0
  end, 'the first client to stop')
  vim.env.PI_NVIM_FAKE_KEY = 'not-a-real-key'
  local init_options = {
    summarizer = 'openai',
    baseUrl = ('http://127.0.0.1:%d/v1'):format(port),
    model = 'silent-model',
    apiKeyEnv = 'PI_NVIM_FAKE_KEY',
    keepRecentTokens = 60,
  }
  if vim.lsp.config then
    vim.lsp.config('pi_lsp', { init_options = init_options })
  else
    require('pi_lsp').setup({
      cmd = { vim.env.PI_LSP_BIN, 'serve' },
      init_options = init_options,
      client = { detached = false },
    })
  end
  T.ok(require('pi_lsp').start(0), 'a new client started')
  T.wait_client()

  local progress = T.record_progress()
  local events = T.record_events({ 'PiCompactionEnd' })
  local done = T.record_done()
  local before = T.read_session(session)
  vim.cmd('PiCompact')
  T.wait(20000, function()
    for _, p in ipairs(progress) do
      if p.kind == 'begin' and p.title == 'Compacting session' then
        return true
      end
    end
  end, 'the compaction to begin')
  T.wait(20000, function()
    return #conns > 0
  end, 'the server to call the summarizer endpoint')
  vim.wait(200)
  T.ok(#done.events == 0, 'the compaction is still running')

  vim.cmd('PiCancel')
  local ev = done.wait('pi.compact', 20000)
  T.ok(ev.error ~= nil, 'a cancelled compaction answers with an error, got %s', vim.inspect(ev.result))
  T.info('error: %s', vim.inspect(ev.error))
  local c = require('pi_lsp.client')
  T.ok(c.error_kind(ev.error) == 'cancelled' or ev.error.code == -32800,
    'the error says cancelled: %s', c.format_error(ev.error))
  T.ok(T.progress_for(progress, 'Compacting session'), 'the progress ended')
  T.wait(10000, function()
    return #events.PiCompactionEnd > 0
  end, 'pi/compactionEnd')
  T.eq(true, events.PiCompactionEnd[1].aborted, 'pi/compactionEnd aborted')
  T.eq(#before, #T.read_session(session), 'entries after the cancelled compaction')

  for _, conn in ipairs(conns) do
    conn:close()
  end
  server:close()
end)
