# A prompt autoloaded from ~/.config/fish/functions (how themes and `fish_config` save it).
set -g fish_greeting ''
#@file .config/fish/functions/fish_prompt.fish
function fish_prompt
    printf '%s@%s %s> ' $USER (prompt_hostname) (prompt_pwd)
end
#@end
