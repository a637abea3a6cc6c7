-- pi/draftReady: with a context window small enough that the session is past
-- the server's soft threshold, a change of the session makes the server draft
-- the next compaction in the background. The plugin notes it quietly (DEBUG
-- notification, PiDraftReady event, " · draft ready" in the statusline, and
-- require('pi_lsp').draft()), and :PiPreview then answers from the draft.
local T = dofile(vim.env.PI_NVIM_TESTS .. '/harness.lua')

T.run('draft', function()
  local session = assert(vim.env.PI_NVIM_SESSION)
  local events = T.record_events({ 'PiDraftReady' })
  local done = T.record_done()
  local notes = T.record_notify()
  local client = T.wait_client()

  vim.cmd('PiContextInfo')
  local ctx = done.wait('pi.context')
  T.ok(ctx.error == nil and type(ctx.result.tokens) == 'number', 'pi.context: %s', vim.inspect(ctx.error or ctx.result))
  local tokens = ctx.result.tokens
  -- Soft threshold: 70% of (contextWindow - reserveTokens); stay below the trigger.
  local reserve = 200
  local window = math.floor(tokens / 0.7 * 0.9) + reserve
  T.ok(tokens < window - reserve, 'below the compaction trigger')
  T.info('tokens %d, contextWindow %d, reserveTokens %d', tokens, window, reserve)
  -- Background drafts are off unless the client turns them on.
  local settings = vim.tbl_extend('force', vim.json.decode(vim.env.PI_NVIM_INIT_OPTIONS or '{}'),
    { contextWindow = window, reserveTokens = reserve, drafts = true })
  require('pi_lsp.client').notify(client, 'workspace/didChangeConfiguration', { settings = settings })

  -- A change of the session (a label) makes the server look again.
  local target
  for _, e in ipairs(T.read_session(session)) do
    if e.type == 'message' then
      target = e.id
    end
  end
  vim.cmd('PiLabel ' .. target .. ' drafted')
  local lab = done.ok('pi.label')

  local ev = T.wait(30000, function()
    return events.PiDraftReady[1]
  end, 'pi/draftReady')
  T.eq(session, ev.session, 'pi/draftReady session')
  T.ok(type(ev.tokensBefore) == 'number' and type(ev.firstKeptEntryId) == 'string', 'draft fields: %s', vim.inspect(ev))
  local sl = T.wait(5000, function()
    local s = require('pi_lsp').statusline()
    return s:find('draft ready', 1, true) and s
  end, 'the statusline to show "draft ready"')
  T.info('statusline: %s', sl)
  T.eq(session, (require('pi_lsp').draft() or {}).session, "require('pi_lsp').draft()")
  local quiet = T.noted(notes, 'draft ready')
  T.ok(quiet and quiet.level == vim.log.levels.DEBUG, 'the draft is reported at DEBUG level: %s', vim.inspect(quiet))

  vim.cmd('PiPreview')
  local pv = done.wait('pi.previewCompaction', 30000)
  T.ok(pv.error == nil and not pv.result.nothingToCompact, 'preview: %s', vim.inspect(pv.error or pv.result))
  T.eq(true, pv.result.fromDraft, 'the preview comes from the draft')
  T.ok(table.concat(require('pi_lsp.edit').info(0), '\n'):find('background draft', 1, true), 'the header says so')
end)
