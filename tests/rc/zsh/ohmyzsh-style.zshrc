# Reproduction of oh-my-zsh's hooks: add-zsh-hook for the title (termsupport, prints OSC 2
# before and after every command), a theme whose precmd rebuilds PROMPT (robbyrussell with
# vcs_info), prompt_subst, and its history options.
autoload -Uz add-zsh-hook vcs_info
setopt prompt_subst extended_history hist_expire_dups_first hist_ignore_dups hist_ignore_space hist_verify share_history
HISTFILE=~/.zsh_history HISTSIZE=50000 SAVEHIST=10000
omz_termsupport_precmd() { print -Pn '\e]2;%n@%m: %~\a' }
omz_termsupport_preexec() { print -Pn '\e]2;%100>...>${(V)1//\%/%%}%<<\a' }
add-zsh-hook precmd omz_termsupport_precmd
add-zsh-hook preexec omz_termsupport_preexec
zstyle ':vcs_info:git:*' formats ' (%b)'
robbyrussell_precmd() {
  vcs_info
  PROMPT="%(?:%{%F{green}%}➜ :%{%F{red}%}➜ ) %{%F{cyan}%}%c%{%f%}${vcs_info_msg_0_} "
}
add-zsh-hook precmd robbyrussell_precmd
