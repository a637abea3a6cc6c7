--- The version of this plugin: the repository's VERSION file, which is also the
--- version of the pi-lsp binary built from it (scripts/set-version.sh writes both).
return '0.2.0'
