-- pi_lsp: user commands (:PiCompact, :PiTree, ...), highlights and the
-- autocmds that follow pi_lsp clients (lua/pi_lsp/plugin.lua; setup() runs the
-- same when this file is never sourced). The LSP config itself is lsp/pi_lsp.lua.
require('pi_lsp.plugin').load()
