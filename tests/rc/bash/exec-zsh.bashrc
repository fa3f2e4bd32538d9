# zsh as the interactive shell where the login shell cannot be changed (a shared host, a
# directory account): the ~/.bashrc hands over at once, and zsh reads ~/.zshrc — here
# Debian's recommended one for new users.
#@becomes zsh
#@needs /etc/zsh/newuser.zshrc.recommended
#@file .zshrc
source /etc/zsh/newuser.zshrc.recommended
#@end
if [ -z "${ZSH_VERSION:-}" ] && command -v zsh >/dev/null; then
  exec zsh
fi
