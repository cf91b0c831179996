#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A state folder someone else owns (issue 20 #3): the state folder of
# `-f ARCHIVE` sits beside the archive, so another user who can write there
# could leave a .idpmake of theirs (mode 777) and swap in what the victim's
# run executes.  As git refuses a repository another user owns, idpmake
# refuses a state folder, or the bundle folder in it, that is not the
# user's or that group or others can write, naming the folder and its
# owner, exit 2, and runs nothing; a chmod that fails is an error; a
# symlink another user made in place of the folder is refused as well.  Two
# users are made here (useradd), so this runs only as root.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || t_skip_rest "not root: cannot create the second user"
command -v useradd >/dev/null && command -v setpriv >/dev/null ||
	t_skip_rest "no useradd or setpriv"

vic=idpv$$ att=idpa$$
adduser_() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do	# /etc/passwd is locked while another useradd runs
		useradd -M -s /bin/sh "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}
deluser_() { userdel "$1" 2>/dev/null || userdel -f "$1" 2>/dev/null; }
trap 'st=$?; deluser_ "$vic"; deluser_ "$att"; (exit $st); t_cleanup' EXIT
adduser_ "$vic" || t_bail "useradd $vic failed"
adduser_ "$att" || t_bail "useradd $att failed"
as() {
	local who=$1
	shift
	setpriv --reuid="$who" --regid="$who" --init-groups env HOME="$T/home-$who" "$@"
}

chmod 755 "$T"
mkdir -m 1777 shared
git init -q --bare -b main "$T/gitops.git" || t_bail "git init failed"
mkdir -p "home-$vic" "home-$att" && chown "$vic" "home-$vic" && chown "$att" "home-$att"
chown -R "$vic" gitops.git	# the victim's GitOps remote (git refuses a repository of another user)
mkdistro src <<DISTRO
idpmake: 1
name: owned
git: {remote: "$T/gitops.git"}
packages:
  p:
    type: manifests
    path: manifests
    hooks:
      post:
        - {name: h, run: "sh hook.sh"}
DISTRO
mkmanifest src/manifests/cm.yaml ConfigMap cm default
echo "echo the archive hook ran >>\"$T/shared/hook-ran\"" >src/hook.sh
t_ok "pack" idpmake -C src pack -o "$T/shared/b.tar"
chmod 644 shared/b.tar

# ---- the attacker's state folder beside the shared archive ----------------
t_ok "the attacker makes .idpmake beside the archive, mode 777" as "$att" mkdir -m 777 shared/.idpmake
t_exit 2 "the victim's -f b.tar plan refuses it" as "$vic" "$IDPMAKE" -C shared -f b.tar plan
t_grep "naming the folder and its owner" \
	"error: the state folder \\.idpmake belongs to user '$att' \\(uid [0-9]+\\), not to you" "$STDERR"
t_ok "nothing was unpacked into it" test ! -e shared/.idpmake/bundle
t_exit 2 "the victim's -f b.tar up too" as "$vic" "$IDPMAKE" -C shared -f b.tar up
t_ok "no hook ran" test ! -e shared/hook-ran
t_ok "nothing was unpacked into it" test ! -e shared/.idpmake/bundle
t_ok "the attacker's folder is not the victim's now" test "$(stat -c %U shared/.idpmake)" = "$att"
rm -rf shared/.idpmake

# ---- the victim's own folder, open to others ----------------------------
t_ok "the victim's up makes its own state folder" as "$vic" "$IDPMAKE" -C shared -f b.tar up
t_grep "the hook ran" 'archive hook ran' shared/hook-ran
rm -f shared/hook-ran
t_eq "it is the victim's, 0700" "$vic 700" "$(stat -c '%U %a' shared/.idpmake)"
chmod 777 shared/.idpmake
t_exit 2 "a state folder others can write is refused" as "$vic" "$IDPMAKE" -C shared -f b.tar plan
t_grep "naming it, its owner and its mode" \
	"the state folder \\.idpmake \\(owner $vic\\) can be written by its group and others \\(mode 0777\\)" "$STDERR"
chmod 770 shared/.idpmake
t_exit 2 "one its group can write as well" as "$vic" "$IDPMAKE" -C shared -f b.tar plan
t_grep "naming the group" "can be written by its group \\(mode 0770\\)" "$STDERR"
chmod 700 shared/.idpmake

# ---- a bundle folder in it that another user owns -----------------------
chown -R "$att" shared/.idpmake/bundle
t_exit 2 "a bundle folder the attacker owns is refused" as "$vic" "$IDPMAKE" -C shared -f b.tar plan
t_grep "naming it and its owner" "the bundle folder \\.idpmake/bundle belongs to user '$att'" "$STDERR"
chown -R "$vic" shared/.idpmake/bundle
t_ok "back in the victim's hands it runs" as "$vic" "$IDPMAKE" -C shared -f b.tar plan

# ---- a state.db that is not the victim's: the chmod fails, an error ------
chown "$att" shared/.idpmake/state.db && chmod 666 shared/.idpmake/state.db
t_exit 2 "a state.db the victim cannot chmod is refused" as "$vic" "$IDPMAKE" -C shared -f b.tar up
t_grep "the failed chmod is named" "cannot make .*state\\.db private \\(chmod 600.*Operation not permitted" "$STDERR"
t_ok "no hook ran" test ! -e shared/hook-ran

# ---- a distro's own state folder, no archive ----------------------------
mkdir -m 755 own && cp -r src/. own/ && rm -rf own/.idpmake && chown -R "$vic" own
mkdir -m 700 own/.idpmake && chown "$att" own/.idpmake
t_exit 2 "a distro's state folder another user owns is refused" as "$vic" "$IDPMAKE" -C own plan
t_grep "naming it and its owner" "the state folder \\.idpmake belongs to user '$att'" "$STDERR"
t_exit 2 "--state naming it the same" as "$vic" "$IDPMAKE" -C own --state "$T/own/.idpmake" status
t_grep "naming it by the path given" "the state folder $T/own/\\.idpmake belongs to user '$att'" "$STDERR"

# ---- a symlink the attacker made, to the victim's own state folder ------
# (in a shared folder without the sticky bit, where the kernel's
# protected_symlinks does not stop it: the victim's run used, and unpacked
# into, whatever folder the attacker picked)
mkdir -m 755 vic && cp src/distro.yaml src/hook.sh vic/ && cp -r src/manifests vic/ && chown -R "$vic" vic
t_ok "the victim's own distro has a state folder" as "$vic" "$IDPMAKE" -C vic up
t_ok "it is there" test -d vic/.idpmake
mkdir -m 777 open && cp shared/b.tar open/ && chmod 644 open/b.tar
t_ok "the attacker links .idpmake beside the archive to it" as "$att" ln -s "$T/vic/.idpmake" open/.idpmake
t_exit 2 "the victim's -f b.tar plan refuses the attacker's symlink" as "$vic" "$IDPMAKE" -C open -f b.tar plan
t_grep "naming it and who made it" "the state folder \\.idpmake is a symlink that user '$att' .* made, not you" "$STDERR"
t_ok "nothing was unpacked into the victim's folder" test ! -e vic/.idpmake/bundle
t_done
