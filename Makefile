# pagesync: build, install and uninstall.
#
#   make                      release build (static Swift stdlib)
#   sudo make install         binaries, systemd units, sample config, man pages
#   sudo make uninstall       removes what install put there (edited config files are kept)
#   make install DESTDIR=/tmp/stage PREFIX=/usr    for packaging
#   make test | make bench | make man | make check-static
#
# Where things go (PREFIX=/usr/local, DESTDIR empty):
#   $(PREFIX)/bin/pagesyncd, $(PREFIX)/bin/pagesync
#   $(PREFIX)/lib/systemd/system/pagesyncd.{service,socket}, pagesyncd-socket.service
#       systemd reads /usr/local/lib/systemd/system for locally installed units (and
#       /usr/lib/systemd/system for PREFIX=/usr); /etc/systemd/system stays the admin's,
#       for `systemctl edit` drop-ins. Override with UNITDIR=.
#   /etc/pagesync/pagesyncd.yaml and the rest of Config/ (documents, token files)
#       always /etc: the units use ConfigurationDirectory=pagesync, which is /etc/pagesync.
#       Existing files are never overwritten.
#   $(PREFIX)/share/man/man8/pagesyncd.8, $(PREFIX)/share/man/man1/pagesync.1
#       generated from the argument parser by swift-argument-parser's generate-manual plugin.
#
# The units in systemd/ name /usr/local/bin/pagesyncd; install rewrites /usr/local to $(PREFIX).

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
UNITDIR    ?= $(PREFIX)/lib/systemd/system
MANDIR     ?= $(PREFIX)/share/man
CONFDIR    := /etc/pagesync

SWIFT            ?= swift
SWIFT_BUILD_FLAGS ?= -c release --static-swift-stdlib
# The man pages only need the --help text, so they come from the debug build (which tests
# reuse): building release twice with different flags would recompile everything twice.
MAN_CONFIGURATION ?= debug
# Set NO_BUILD=1 to install binaries already built with SWIFT_BUILD_FLAGS (e.g. in CI).
NO_BUILD   ?=

UNITS      := pagesyncd.service pagesyncd-socket.service pagesyncd.socket
PROGRAMS   := pagesyncd pagesync
MAN_OUT    := .build/man
PLUGIN_OUT := .build/plugins/GenerateManual/outputs
MAN_DATE   := $(shell git log -1 --format=%cs 2>/dev/null || date +%F)

INSTALL      ?= install
INSTALL_BIN  := $(INSTALL) -m 0755
INSTALL_DATA := $(INSTALL) -m 0644

.PHONY: all build man install uninstall test bench check-static clean

all: build

build:
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

# Two plugin runs: one --section applies to every tool, and pagesyncd is a daemon (8)
# while pagesync is a user command (1).
man:
	$(SWIFT) package plugin --allow-writing-to-package-directory generate-manual \
		--configuration $(MAN_CONFIGURATION) --section 8 --date $(MAN_DATE)
	mkdir -p $(MAN_OUT)
	cp $(PLUGIN_OUT)/pagesyncd/pagesyncd.8 $(MAN_OUT)/pagesyncd.8
	$(SWIFT) package plugin --allow-writing-to-package-directory generate-manual \
		--configuration $(MAN_CONFIGURATION) --section 1 --date $(MAN_DATE)
	cp $(PLUGIN_OUT)/pagesync/pagesync.1 $(MAN_OUT)/pagesync.1

install: man $(if $(NO_BUILD),,build)
	@bin=$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path) && \
	for p in $(PROGRAMS); do \
		echo "  BIN  $(DESTDIR)$(BINDIR)/$$p"; \
		$(INSTALL) -d "$(DESTDIR)$(BINDIR)" && $(INSTALL_BIN) "$$bin/$$p" "$(DESTDIR)$(BINDIR)/$$p" || exit 1; \
	done
	@$(INSTALL) -d "$(DESTDIR)$(UNITDIR)"
	@for u in $(UNITS); do \
		echo "  UNIT $(DESTDIR)$(UNITDIR)/$$u"; \
		sed -e 's#/usr/local/bin/#$(BINDIR)/#g' -e 's#/usr/local/#$(PREFIX)/#g' "systemd/$$u" > "$(DESTDIR)$(UNITDIR)/$$u.tmp" && \
		chmod 0644 "$(DESTDIR)$(UNITDIR)/$$u.tmp" && mv "$(DESTDIR)$(UNITDIR)/$$u.tmp" "$(DESTDIR)$(UNITDIR)/$$u" || exit 1; \
	done
	@$(INSTALL) -d "$(DESTDIR)$(MANDIR)/man8" "$(DESTDIR)$(MANDIR)/man1"
	@echo "  MAN  $(DESTDIR)$(MANDIR)/man8/pagesyncd.8"; $(INSTALL_DATA) $(MAN_OUT)/pagesyncd.8 "$(DESTDIR)$(MANDIR)/man8/pagesyncd.8"
	@echo "  MAN  $(DESTDIR)$(MANDIR)/man1/pagesync.1";  $(INSTALL_DATA) $(MAN_OUT)/pagesync.1 "$(DESTDIR)$(MANDIR)/man1/pagesync.1"
	@$(INSTALL) -d -m 0755 "$(DESTDIR)$(CONFDIR)"
	@if [ -d Config ]; then \
		cd Config && find . -type f | sort | while read -r f; do \
			f=$${f#./}; dest="$(DESTDIR)$(CONFDIR)/$$f"; \
			if [ -e "$$dest" ]; then echo "  KEEP $$dest (exists)"; continue; fi; \
			echo "  CONF $$dest"; \
			$(INSTALL) -d -m 0755 "$$(dirname "$$dest")" && $(INSTALL_DATA) "$$f" "$$dest" || exit 1; \
		done; \
	else echo "  note: no Config/ directory, no sample config installed"; fi
	@if [ -z "$(DESTDIR)" ]; then echo "Now: systemctl daemon-reload && systemctl enable --now pagesyncd.socket (or pagesyncd.service)"; fi

# Removes exactly what install put there. Config files are removed only when unchanged
# from the shipped sample; edited ones stay (and so does their directory).
uninstall:
	@for p in $(PROGRAMS); do rm -fv "$(DESTDIR)$(BINDIR)/$$p"; done
	@for u in $(UNITS); do rm -fv "$(DESTDIR)$(UNITDIR)/$$u"; done
	@rm -fv "$(DESTDIR)$(MANDIR)/man8/pagesyncd.8" "$(DESTDIR)$(MANDIR)/man1/pagesync.1"
	@if [ -d Config ]; then \
		cd Config && find . -type f | sort | while read -r f; do \
			f=$${f#./}; dest="$(DESTDIR)$(CONFDIR)/$$f"; \
			[ -e "$$dest" ] || continue; \
			if cmp -s "$$f" "$$dest"; then rm -fv "$$dest"; else echo "  kept $$dest (edited)"; fi; \
		done; \
	fi
	@if [ -d "$(DESTDIR)$(CONFDIR)" ]; then find "$(DESTDIR)$(CONFDIR)" -depth -type d -empty -delete; fi
	@if [ -z "$(DESTDIR)" ]; then echo "Now: systemctl daemon-reload"; fi

test:
	scripts/test

bench:
	@if [ -x scripts/bench ]; then scripts/bench; else echo "no scripts/bench yet"; fi

# The static binary must need no libswift*.so: only libuv and the C/C++ runtime.
check-static:
	@bin=$$($(SWIFT) build $(SWIFT_BUILD_FLAGS) --show-bin-path) && \
	for p in $(PROGRAMS); do \
		echo "$$p:"; ldd "$$bin/$$p" || exit 1; \
		if ldd "$$bin/$$p" | grep -q libswift; then echo "error: $$p links a shared Swift library"; exit 1; fi; \
	done

clean:
	$(SWIFT) package clean
	rm -rf $(MAN_OUT)
