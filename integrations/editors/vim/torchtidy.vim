" ALE (dense-analysis/ale; Debian: vim-ale) runs torchtidy through its stock clangtidy
" linter pointed at the clang-tidy-torch wrapper. Source this from your vimrc, or copy it.
" Works the same in Neovim. test/integrations/vim-ale.sh exercises these settings.

" Only clangtidy for C++: other linters (clangd, cc) would parse each LibTorch file again.
let g:ale_linters = get(g:, 'ale_linters', {})
let g:ale_linters.cpp = ['clangtidy']
" Absolute path, or just the name when ~/.local/bin or /usr/local/bin is on PATH.
let g:ale_cpp_clangtidy_executable = 'clang-tidy-torch'
" Drop this line to take the checks from the project's .clang-tidy instead.
let g:ale_cpp_clangtidy_checks = ['-*', 'torch-*']
" ALE finds compile_commands.json above the file or in build/; set it when it lives elsewhere:
" let g:ale_c_build_dir = '/path/to/project/build'
" clang-tidy lints the file on disk, so ALE runs it on open and save (lint_file), not as you type.
let g:ale_lint_on_text_changed = 'never'
