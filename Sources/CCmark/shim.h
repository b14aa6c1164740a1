#ifndef PAGESYNC_CCMARK_SHIM_H
#define PAGESYNC_CCMARK_SHIM_H
// cmark-gfm, GitHub's CommonMark parser (libcmark-gfm-dev), and its extensions
// (libcmark-gfm-extensions-dev: tables, strikethrough). Only the pager's markdown parser
// (PageSyncPager/CmarkParser.swift) imports this.
#include <cmark-gfm.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm-core-extensions.h>
#endif
