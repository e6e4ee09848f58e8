# source-tree.sh - sourced by contribs/build.sh and contribs/test-all.sh:
# the source tree that an out-of-tree build configures.
#
#   se_source_tree TOP BUILD     prints the tree to run configure from
#
# Normally the checkout itself.  But the README's production build runs
# ./configure in the checkout, and automake then refuses every build
# elsewhere from it ("source directory already configured; run make
# distclean there first").  Such a checkout is built from anyway: from a
# copy of it in BUILD/src (tracked and untracked files, .gitignore
# honoured, so none of the in-tree build's output), refreshed by rsync at
# every build (mtimes kept, so make stays incremental), as
# contribs/packages/build and contribs/release/build copy it.  The in-tree
# build is left as it is: the admin's `make install` may still need it.
se_source_tree() { # TOP BUILD
	if [ ! -f "$1/config.status" ]; then
		echo "$1"
		return 0
	fi
	printf '== the checkout is configured in-tree (%s): building from a copy in %s (make distclean in the checkout builds it in place again)\n' \
		"$1/config.status" "$2/src" >&2
	mkdir -p "$2/src"
	rsync -a --delete --exclude=/.git --exclude='/_build*' --exclude=/slurm-src \
		--filter=':- .gitignore' "$1/" "$2/src/" >&2 || {
		echo "source-tree: rsync of $1 to $2/src failed" >&2
		return 1
	}
	echo "$2/src"
}
