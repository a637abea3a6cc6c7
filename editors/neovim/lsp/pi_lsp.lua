-- pi-lsp: a language server for the Pi coding agent's session files.
--
-- Neovim 0.11+:
--   vim.lsp.config('pi_lsp', { cmd = { '/path/to/pi-lsp', 'serve' } }) -- optional
--   vim.lsp.enable('pi_lsp')
-- Neovim 0.10: require('pi_lsp').setup({ cmd = { ... } }) (see :help pi_lsp).
--
-- There are no `filetypes`: pi-lsp works on the Pi sessions of a workspace, not
-- on a language, so it attaches to any file buffer of a workspace for which Pi
-- has sessions ($PI_CODING_AGENT_DIR/sessions/--<encoded cwd>--/). `root_dir`
-- finds that workspace; `root_markers` serve when `require_sessions` is off.

---@type vim.lsp.Config
return {
  cmd = require('pi_lsp.config').default_cmd(),
  root_markers = { '.pi', '.git', '.hg', '.jj' },
  ---@param bufnr integer
  ---@param on_dir fun(root_dir?: string)
  root_dir = function(bufnr, on_dir)
    local root = require('pi_lsp.config').find_root(bufnr)
    if root then
      on_dir(root)
    end
  end,
  -- initializationOptions: session, summarizer ("extractive"|"openai"), baseUrl,
  -- model, provider, apiKeyEnv, drafts (background drafts, off unless true),
  -- clearToolOutput (clear old tool output before a threshold compaction, off unless
  -- true), contextWindow, reserveTokens, keepRecentTokens. cmd and the summarizer's
  -- options belong in your own config, not a project's .nvim.lua (:help pi_lsp-user-level).
  init_options = {},
  capabilities = require('pi_lsp.config').capabilities(),
  -- Keeps serverInfo (Neovim 0.10 drops it) and says once when the server is another
  -- version than the plugin.
  on_init = function(client, result)
    require('pi_lsp.plugin').on_init(client, result)
  end,
  -- pi/* notifications from the server. $/progress is left to Neovim's own
  -- handler (LspProgress autocmd, vim.lsp.status(), fidget.nvim).
  handlers = require('pi_lsp.handlers').handlers,
}
