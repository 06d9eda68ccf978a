-- Neovim (init.lua) form of torchtidy.vim: ALE with its clangtidy linter on clang-tidy-torch.
-- Debian's vim-ale also installs ALE for Neovim; elsewhere install dense-analysis/ale.
vim.g.ale_linters = { cpp = { 'clangtidy' } }
vim.g.ale_cpp_clangtidy_executable = 'clang-tidy-torch'
vim.g.ale_cpp_clangtidy_checks = { '-*', 'torch-*' }
-- vim.g.ale_c_build_dir = '/path/to/project/build'
vim.g.ale_lint_on_text_changed = 'never'
vim.cmd('packadd! ale')
