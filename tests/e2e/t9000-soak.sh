#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# A soak against a model (issue 10 §6). A small distro (3 clusters on the Argo
# CD emulator, 6 manifests packages with needs, vars used in their files
# through rewrite rules, profiles, post hooks) is changed at random, round
# after round, by tests/soak/model.py, which also says what the GitOps
# repository must hold. Each round makes one edit (a package file, a variable,
# a need, a profile or a hook) and, about one round in two, injects a fault
# while `idpmake up --prune` runs:
#
#	http5xx   503/502/500/504 answers from Argo CD (retried)
#	busy      an Application busy with another operation (code 9, waited out)
#	degraded  an Application that turns Degraded after its sync (the run fails)
#	token     the token expires mid-run (401, code 16: the run fails)
#	kill9     kill -9 of the run's process group at a random step
#	pusher    another pusher committing to other/ in the GitOps repository
#	          while the run pushes
#
# A fault round may exit 0 or 1 (or 137 when killed); a round without a fault
# must exit 0; no round may exit otherwise (2, a signal, a sanitizer report).
# At checkpoints (every SOAK_CHECK rounds) and at the end, after the faults
# are cleared and `up` has succeeded:
#	- the remote's main holds exactly the model's render (besides other/);
#	- every Application of the model exists, at its folder, Synced and
#	  Healthy, its last sync at a commit whose folder equals main's; no other
#	  Application is left (--prune);
#	- every commit of the pusher is an ancestor of main (none lost);
#	- no two commits carry the same Idpmake-Run trailer;
#	- `idpmake plan --exit-code` has nothing to do.
# The end shows the checks can fail: a tampered remote, an Application out
# of sync, a lost commit, a repeated run and an edit are each caught (and the
# first two reverted and passing again).
#
# Parameters: SOAK_SEED (default 9000, so that CI's verdict is reproducible;
# 0 picks one at random; printed, and a failing seed replays the same
# sequence of edits and faults: only the moment a kill lands and how far the
# pusher gets depend on timing), SOAK_ROUNDS (default 300, 60 under
# ASan), SOAK_SECONDS (time budget, default 200 s, 90 under ASan: the soak
# stops by itself when it is spent and checks at the end), SOAK_CHECK (rounds
# between checkpoints, default 10). A longer one:
#
#	SOAK_ROUNDS=600 SOAK_SECONDS=1200 E2E_TIMEOUT=1500 tests/e2e/run.sh t9000
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

rounds=${SOAK_ROUNDS:-300} secs=${SOAK_SECONDS:-200}
case $IDPMAKE in */asan/*) rounds=${SOAK_ROUNDS:-60} secs=${SOAK_SECONDS:-90} ;; esac
every=${SOAK_CHECK:-10}
seed=${SOAK_SEED:-9000}
[ "$seed" = 0 ] && seed=$(($(od -An -tu2 -N2 /dev/urandom | tr -d ' ') + 1))
for v in "$seed" "$rounds" "$secs" "$every"; do
	case $v in '' | *[!0-9]*) t_bail "SOAK_SEED, SOAK_ROUNDS, SOAK_SECONDS and SOAK_CHECK are numbers: '$v'" ;; esac
done
[ "$every" -gt 0 ] || t_bail "SOAK_CHECK must be positive"
echo "# SOAK_SEED=$seed SOAK_ROUNDS=$rounds SOAK_SECONDS=$secs (replay: SOAK_SEED=$seed)"
RANDOM=$seed
model=$top/tests/soak/model.py
python3 -c 'import yaml' 2>/dev/null || t_skip_rest "python3-yaml missing: the model reads YAML"
command -v setsid >/dev/null || t_skip_rest "setsid missing (util-linux)"

export IDPMAKE_ARGOCD_POLL_MS=30 IDPMAKE_ARGOCD_BACKOFF_MS=20
bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string)$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 30 --health-ms 30 --reconcile-ms 10 --delete-ms 30 \
	--cluster c1=https://c1.example:6443 --cluster c2=https://c2.example:6443 --cluster c3=https://c3.example:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
api=http://$ARGOCD_SERVER/api/v1

t_ok "the model writes the distro" python3 "$model" init "$seed" "$T/d" "$bare"
cd "$T/d" || exit 1

# ---- helpers ---------------------------------------------------------------
declare -A survived=()
bad_exit=0
# up_round WHAT ALLOWED...: one `up`; its exit must be one of ALLOWED
up_round() {
	local what=$1 st
	shift
	"$IDPMAKE" up --prune >"$T/up.out" 2>&1
	st=$?
	check_exit "$what" "$st" "$@"
}
# check_exit WHAT STATUS ALLOWED...: a failed check (with the output) when
# STATUS is not allowed or the output holds a sanitizer report
check_exit() {
	local what=$1 st=$2 a ok=1
	shift 2
	for a in "$@"; do [ "$st" = "$a" ] && ok=0; done
	if grep -q -E 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$T/up.out"; then ok=1; fi
	last_status=$st
	if [ $ok = 0 ]; then
		return 0
	fi
	bad_exit=$((bad_exit + 1))
	{ echo "round $round ($what): up exited $st, allowed: $*"; cat "$T/up.out"; } >"$T/.why"
	t_report 1 "round $round: up exits as allowed (SOAK_SEED=$seed)" "$T/.why"
	return 1
}

# the pusher: commits files under other/ to main from its own clone, until
# $T/pusher.stop exists; each pushed commit goes to $T/pushed
git clone -q "$bare" "$T/pusher" 2>/dev/null || git init -q -b main "$T/pusher"
git -C "$T/pusher" remote add origin "$bare" 2>/dev/null
: >"$T/pushed"
pushes=0
pusher() {
	local i=0 c
	cd "$T/pusher" || return 1
	while [ ! -e "$T/pusher.stop" ] && [ $i -lt 20 ]; do
		i=$((i + 1))
		git fetch -q origin main 2>/dev/null && git reset -q --hard FETCH_HEAD
		mkdir -p other
		echo "$seed $round $i" >"other/r$round-$i.txt"
		git add other && git commit -q -m "pusher: round $round, $i" &&
			git push -q origin HEAD:main 2>/dev/null && git rev-parse HEAD >>"$T/pushed"
		sleep 0.0$((RANDOM % 9))
	done
}

# apps_json: every Application, as the API lists them
apps_json() {
	curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "$api/applications" >"$T/apps.json"
}

# busy_fault APP MS: APP busy with an automated operation for MS ms.  An
# operation that a killed round left running (a few ms at --op-ms 30) is
# waited out first: the emulator refuses a second one (400), as it should.
busy_fault() {
	local i
	for ((i = 0; i < 50; i++)); do
		curl -sS -m 10 -X POST -H 'Content-Type: application/json' -d "{\"app\": \"$1\", \"busy_for_ms\": $2}" \
			"${emu:-http://$ARGOCD_SERVER/_emu}/fault" >"$T/.busy" 2>&1
		grep -q "already has an operation" "$T/.busy" || break
		sleep 0.1
	done
	grep -q '"ok"' "$T/.busy" && return 0
	t_report 1 "the emulator takes the busy fault for $1" "$T/.busy"
	return 1
}

# check_apps: the model's Applications, each at its folder, Synced and
# Healthy, its last sync at a commit whose folder is main's; no others
check_apps() {
	python3 "$model" apps "$T/d" >"$T/apps.want" || return 1
	apps_json || { echo "cannot list the Applications"; return 1; }
	python3 - "$T/apps.want" "$T/apps.json" "$bare" <<'EOF'
import json, re, subprocess, sys
want = dict(l.split() for l in open(sys.argv[1]) if l.strip())
items = json.load(open(sys.argv[2])).get("items") or []
bare = sys.argv[3]
def tree(rev, path):
    r = subprocess.run(["git", "-C", bare, "rev-parse", "%s:%s" % (rev, path)], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None
got, bad = {}, 0
for a in items:
    got[a["metadata"]["name"]] = a
for n in sorted(set(got) - set(want)):
    print("an Application the model does not have: %s" % n); bad += 1
for n in sorted(set(want) - set(got)):
    print("missing Application: %s" % n); bad += 1
group = {}  # the model's _shared/PACKAGE-{N}: the one folder its Applications point at
for n in sorted(set(want) & set(got)):
    a, st = got[n], got[n].get("status") or {}
    path = (a["spec"].get("source") or {}).get("path")
    sync = (st.get("sync") or {}).get("status")
    health = (st.get("health") or {}).get("status")
    rev = (((st.get("operationState") or {}).get("syncResult")) or {}).get("revision")
    if "-{" in want[n]:
        g = want[n]
        if not re.match(r"^%s-[0-9a-f]{8}$" % re.escape(g.rsplit("-{", 1)[0]), path or ""):
            print("%s: path %s, the model says a folder %s-XXXXXXXX" % (n, path, g.rsplit("-{", 1)[0])); bad += 1
        elif group.setdefault(g, path) != path:
            print("%s: path %s, another cluster of its group is at %s" % (n, path, group[g])); bad += 1
        elif list(group.values()).count(path) > 1:
            print("%s: path %s, which another group has too" % (n, path)); bad += 1
        want[n] = path or g
    if path != want[n]:
        print("%s: path %s, the model says %s" % (n, path, want[n])); bad += 1
    if sync != "Synced" or health != "Healthy":
        print("%s: %s and %s" % (n, sync, health)); bad += 1
    if not rev or tree(rev, want[n]) is None or tree(rev, want[n]) != tree("main", want[n]):
        print("%s: last synced at %s, whose %s is not main's" % (n, rev, want[n])); bad += 1
print("checked %d Applications: %d problems" % (len(want), bad))
sys.exit(1 if bad else 0)
EOF
}

# check_pushed: every commit the pusher pushed is an ancestor of main
check_pushed() {
	local c n=0 lost=0
	while read -r c; do
		n=$((n + 1))
		git -C "$bare" merge-base --is-ancestor "$c" main || { echo "lost: $c"; lost=$((lost + 1)); }
	done <"${1:-$T/pushed}"
	echo "checked $n commits of the pusher: $lost lost"
	[ "$lost" = 0 ]
}

# check_runs: no two commits carry the same Idpmake-Run trailer, and every
# commit of idpmake carries one
check_runs() {
	git -C "$bare" log --format='%H %an%n%(trailers:key=Idpmake-Run,valueonly)' main >"$T/runs.txt" || return 1
	python3 - "$T/runs.txt" "${1:-}" <<'EOF'
import sys
seen, bad, commit = {}, 0, None
lines = open(sys.argv[1]).read().splitlines()
if sys.argv[2]:
    lines += sys.argv[2].split("\n")
for l in lines:
    if not l.strip():
        continue
    f = l.split()
    if len(f[0]) == 40 and len(f) == 2 and all(c in "0123456789abcdef" for c in f[0]):
        if commit and commit[1] == "idpmake" and not commit[2]:
            print("commit %s of idpmake has no Idpmake-Run" % commit[0]); bad += 1
        commit = [f[0], f[1], False]
        continue
    commit[2] = True
    if l in seen:
        print("commits %s and %s carry the same run: %s" % (seen[l], commit[0], l)); bad += 1
    seen[l] = commit[0]
if commit and commit[1] == "idpmake" and not commit[2]:
    print("commit %s of idpmake has no Idpmake-Run" % commit[0]); bad += 1
print("checked %d runs: %d repeated or missing" % (len(seen), bad))
sys.exit(1 if bad else 0)
EOF
}

# settle: no fault left; up until it succeeds (at most 4 tries)
settle() {
	local i
	emu_reset || return 1
	for i in 1 2 3 4; do
		"$IDPMAKE" up --prune >"$T/up.out" 2>&1
		check_exit "settle" $? 0 1 || return 1
		[ "$last_status" = 0 ] && return 0
		cp "$T/up.out" "$T/settle$i.out"
	done
	return 1
}

# apps_settle: check_apps passes within 10 s (the last try's problems printed)
apps_settle() {
	t_wait_for 10 check_apps >/dev/null || check_apps
}

checkpoint() {
	local name=$1
	t_ok "$name: up succeeds once the faults are cleared" settle
	[ "$t_status" = 0 ] || cat "$T/up.out"
	t_ok "$name: the remote holds the model's render" python3 "$model" check "$T/d" "$bare" main
	# within 10 s: a round's busy fault is an operation idpmake did not start, and when it ends
	# after the run, its Application is Progressing for the emulator's health delay (a soak
	# failed on that, once in 4 runs of 300 rounds)
	t_ok "$name: every Application is at its folder's last commit and Healthy" apps_settle
	t_ok "$name: no commit of the pusher is lost" check_pushed
	t_ok "$name: no two commits carry the same run" check_runs
	t_ok "$name: plan has nothing to do" "$IDPMAKE" plan --exit-code
	checkpoints=$((checkpoints + 1))
}

# ---- the rounds ------------------------------------------------------------
t_ok "first up" "$IDPMAKE" up --prune
checkpoints=0
start=$SECONDS
round=0
while [ $round -lt "$rounds" ] && [ $((SECONDS - start)) -lt "$secs" ]; do
	round=$((round + 1))
	python3 "$model" round "$seed" "$round" "$T/d" >"$T/round.txt" 2>"$T/round.err" ||
		t_bail "round $round: the model failed: $(cat "$T/round.err")"
	edit=$(sed -n 1p "$T/round.txt")
	read -r fault app nfault k <<<"$(sed -n 2p "$T/round.txt")"
	echo "# round $round: $edit; fault: $fault"
	case $fault in
	none)
		up_round "$edit" 0 ;;
	http5xx)
		codes=(503 502 500 504)
		emu_post fault "{\"path_regex\": \"^/api/v1/applications\", \"status\": ${codes[$k % 4]}, \"count\": $nfault}" &&
			up_round "$fault" 0 1 ;;
	busy)
		if [ "$app" != - ] && apps_json && grep -q "\"name\":\"$app\"" "$T/apps.json"; then
			busy_fault "$app" $((200 * k + 100)) && up_round "$fault" 0 1
		else
			up_round "$fault (no such app yet)" 0 1
		fi ;;
	degraded)
		emu_post fault "{\"app\": \"$app\", \"health\": \"Degraded\", \"message\": \"soak round $round\"}" &&
			up_round "$fault" 0 1 ;;
	token)
		paths=("^/api/v1/applications$" "/sync$" "^/api/v1/applications/" "^/api/v1/clusters")
		emu_post fault "{\"path_regex\": \"${paths[$k % 4]}\", \"status\": 401, \"code\": 16, \"count\": 1,
			\"message\": \"invalid session: token has invalid claims: token is expired\"}" &&
			up_round "$fault" 0 1 ;;
	kill9)
		# killed once k = nfault - 1 steps are done (k = 0: after 0 to 0.3 s)
		k=$((nfault - 1))
		setsid "$IDPMAKE" up --prune >"$T/up.out" 2>&1 &
		pid=$!
		at_k() { [ "$(grep -c -E '^\[[0-9]+/[0-9]+\]' "$T/up.out")" -ge "$k" ]; }
		gone() { local s; s=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) && [ "$s" != Z ] && return 1; return 0; }
		reached() { at_k || gone; }
		t_wait_for 60 reached || t_report 1 "round $round: the run reached step $k within 60 s"
		[ $k = 0 ] && sleep "0.$((RANDOM % 4))"
		gone || kill -9 -- "-$pid" 2>/dev/null
		wait "$pid"
		check_exit "$fault at step $k" $? 0 1 137 ;;
	pusher)
		rm -f "$T/pusher.stop"
		pusher &
		ppid=$!
		up_round "$fault" 0 1
		touch "$T/pusher.stop"
		wait "$ppid"
		n=$(wc -l <"$T/pushed")
		[ "$n" -gt "$pushes" ] || { fault="pusher (none pushed)"; }
		pushes=$n ;;
	*) t_bail "unknown fault '$fault'" ;;
	esac
	[ "$fault" = none ] || { [ "$fault" = kill9 ] && [ "$last_status" != 137 ] && fault="kill9 (finished first)"; }
	echo "#   exit $last_status: $(tail -n 1 "$T/up.out")"
	survived[$fault]=$((${survived[$fault]:-0} + 1))
	[ "$fault" = none ] || emu_reset
	[ $((round % every)) = 0 ] && checkpoint "checkpoint after round $round"
done
elapsed=$((SECONDS - start))
[ $((round % every)) = 0 ] || checkpoint "the end, after round $round"
t_eq "no round exited in a way it may not" 0 "$bad_exit"

echo "# SOAK_SEED=$seed: $round rounds in $elapsed s, $checkpoints checkpoints, $(wc -l <"$T/pushed") commits of the pusher"
for f in none http5xx busy degraded token kill9 "kill9 (finished first)" pusher "pusher (none pushed)"; do
	echo "#   $f: ${survived[$f]:-0}"
done

# ---- each check can fail --------------------------------------------------
main0=$(git -C "$bare" rev-parse main)
some=$(git -C "$bare" ls-tree -r --name-only main | grep -v -e '^other/' -e '^\.idpmake/' | head -n 1)
git clone -q "$bare" "$T/tamper" && git -C "$T/tamper" rm -q "$some" &&
	git -C "$T/tamper" commit -q -m tamper && git -C "$T/tamper" push -q origin HEAD:main ||
	t_bail "cannot tamper with the remote"
t_exit 1 "a tampered remote fails the model check" python3 "$model" check "$T/d" "$bare" main
t_grep "naming the file" "missing: $some" "$STDOUT"
git -C "$bare" update-ref refs/heads/main "$main0" || t_bail "cannot revert the tamper"
t_ok "reverted, it passes" python3 "$model" check "$T/d" "$bare" main
python3 "$model" apps "$T/d" >"$T/apps.want" || t_bail "the model cannot list the Applications"
app=$(sed -n '1s/ .*//p' "$T/apps.want")
emu_post fault "{\"app\": \"$app\", \"out_of_sync\": true}"
t_fail "an Application out of sync fails the Application check" check_apps
t_grep "naming it" "^$app: OutOfSync" "$STDOUT"
emu_post fault "{\"app\": \"$app\", \"out_of_sync\": false}"
t_ok "once in sync again, it passes" check_apps
printf '%s\n' 0123456789012345678901234567890123456789 >"$T/pushed.bad"
cat "$T/pushed" >>"$T/pushed.bad"
t_fail "a lost commit fails the pusher check" check_pushed "$T/pushed.bad"
last=$(git -C "$bare" log -1 --format='%(trailers:key=Idpmake-Run,valueonly)' --author=idpmake main | head -n 1)
t_fail "a repeated run fails the run check" check_runs "$(printf '%s idpmake\n%s' "$main0" "$last")"
t_grep "naming the run" "carry the same run: $last" "$STDOUT"
mkmanifest packages/p1/soak-tamper.yaml ConfigMap soak-tamper
t_exit 1 "an edit makes plan --exit-code find work" "$IDPMAKE" plan --exit-code
t_done
