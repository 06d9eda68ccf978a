-- torchtidy's language server beside clangd in Neovim's built-in LSP client.
-- Neovim 0.7 (Debian 12) and newer: one torchtidy client, attached to every C/C++ buffer.
-- Put this file in ~/.config/nvim/plugin/ (or require it from init.lua); `torchtidy` must be
-- in PATH (cmake --install). From Neovim 0.8, vim.lsp.start{ name = 'torchtidy',
-- cmd = { 'torchtidy', 'lsp' } } in a FileType autocmd does the same.
local torchtidy_client

vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'c', 'cpp' },
  callback = function(args)
    if not torchtidy_client or vim.lsp.client_is_stopped(torchtidy_client) then
      torchtidy_client = vim.lsp.start_client({
        name = 'torchtidy',
        cmd = { 'torchtidy', 'lsp' },
        root_dir = vim.fn.getcwd(),
        -- Without a compile_commands.json in a directory above the files:
        -- init_options = { compilationDatabasePath = '/path/to/build' },
      })
    end
    vim.lsp.buf_attach_client(args.buf, torchtidy_client)
  end,
})
