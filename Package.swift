// swift-tools-version: 6.2
import PackageDescription

// The executables link the Swift runtime and Foundation statically in release (what
// `--static-swift-stdlib` does at link time), so the installed binaries need no Swift .so. It is
// set here, not with `--static-swift-stdlib` on the command line, because that flag also changes
// every compile command (switching it rebuilds everything) and its static resource directory has
// no Testing module, so the tests could not share the release build. Two FoundationEssentials
// companions are named because the shared FoundationEssentials module does not autolink them.
// `make check-static` checks the result with ldd.
let staticSwiftRuntime: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib", "-l_FoundationCollections", "-l_FoundationCShims"], .when(configuration: .release)),
]
// The test targets compile without optimization in every configuration: `scripts/test` builds
// them in release beside the products (one build for everything), where -O would only make
// the test code slower to compile. The modules under test keep -O. In release each test module
// is one whole-module job; -no-emit-module-separately-wmo has that job write the .swiftmodule
// too, instead of a second job that expands every @Test macro again: rebuilding the six test
// targets after touching every test file went from 89 s to 73 s on 2 cores (168 s to 140 s of
// CPU). A clean build is CPU-bound and about as long either way (260 s).
let testCode: [SwiftSetting] = [.unsafeFlags(["-Onone", "-no-emit-module-separately-wmo"])]

let package = Package(
    name: "pagesync",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pagesyncd", targets: ["pagesyncd"]),
        .executable(name: "pagesync", targets: ["pagesync"]),
    ],
    // Each package is pinned to an exact release, which its upstream tag satisfies anywhere.
    // Package.resolved is not tracked (.gitignore): it records commit ids, and one written
    // where the packages come from a mirror names commits that upstream does not have. The
    // packages these depend on in turn are resolved within the ranges the pinned releases
    // declare (they cannot be pinned here: SwiftPM warns about a dependency no target uses).
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // No traits: the config file is YAML read through our own libyaml snapshot
        // (PageSyncServer/Config), not the package's YAML (Yams) or JSON traits, which both
        // pull in all of Foundation and ICU's data (about 45 of a stripped daemon's 62 MB).
        .package(url: "https://github.com/apple/swift-configuration", exact: "1.4.0", traits: []),
        // The Prometheus text format of the metrics listener. Its own dependencies are
        // swift-atomics and swift-metrics' CoreMetrics: no SwiftNIO.
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
    ],
    targets: [
        // libuv, from the system (libuv1-dev).
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv", providers: [.apt(["libuv1-dev"])]),
        // OpenSSL 3 (libssl-dev), for TLS on the loop through memory BIOs.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // hiredis and its libuv adapter, from the system (libhiredis-dev). No pkgConfig: its
        // .pc file adds -D_FILE_OFFSET_BITS=64, which SwiftPM warns about; the headers are in
        // /usr/include/hiredis and the module map links -lhiredis.
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        // libyaml (libyaml-dev), for the config file. Its module map links nothing: the
        // daemon links libyaml (see PageSyncServer).
        .systemLibrary(name: "CYAML", providers: [.apt(["libyaml-dev"])]),
        // cmark-gfm, GitHub's CommonMark parser with its table extension (libcmark-gfm-dev,
        // libcmark-gfm-extensions-dev), for the pager's markdown and the daemon's markdown
        // pages. No pkgConfig: the headers are in /usr/include. The module map links nothing:
        // PageSyncMarkdown links both.
        .systemLibrary(name: "CCmark", providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        // Node's http-parser (libhttp-parser-dev), for the request heads of the HTTP listener
        // (metrics and health). Its module map links the shared library, like libyaml's and
        // cmark-gfm's: Debian's policy wants no embedded copy, a security update of the parser
        // then reaches the installed daemon, and dpkg-shlibdeps makes the package depend on
        // libhttp-parser2.9.
        .systemLibrary(name: "CHTTPParser", providers: [.apt(["libhttp-parser-dev"])]),
        // wslay (libwslay-dev), WebSocket framing for the web listener: event-based, no I/O of
        // its own (the loop hands it bytes through callbacks). Shared library, like http-parser;
        // the package then depends on libwslay1.
        .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"])]),

        // Functional core: pure Swift, no I/O.
        .target(name: "PageSyncCore"),
        // Markdown's structure, pure too: CCmark only parses markdown text, into a tree the
        // pager renders and an outline the daemon splits pages at (CmarkParser.swift).
        // Debian's C libraries are linked as shared libraries, as Debian's policy (4.13) asks and
        // lintian checks (embedded-library): a security update of libyaml or cmark-gfm reaches
        // the installed binaries without a rebuild, and the package depends on them through
        // dpkg-shlibdeps. Only the Swift runtime, which Debian does not ship, is static.
        .target(
            name: "PageSyncMarkdown", dependencies: ["CCmark"],
            linkerSettings: [.linkedLibrary("cmark-gfm-extensions"), .linkedLibrary("cmark-gfm")]),
        .target(name: "PageSyncPager", dependencies: ["PageSyncCore", "PageSyncMarkdown"]),

        // Imperative shell: the only module that touches libuv (and OpenSSL's sessions and
        // hiredis's connections on it).
        .target(name: "UV", dependencies: ["CLibUV", "COpenSSL", "CHiredis", "CHTTPParser", "CWslay"]),

        // The daemon: coordinator actor, sessions, persistence, configuration.
        .target(
            name: "PageSyncServer",
            dependencies: [
                // COpenSSL: HMAC-SHA256 for AUTH tokens (TokenVerifier), from the OpenSSL the
                // daemon links for TLS anyway, instead of swift-crypto's own BoringSSL.
                "PageSyncCore", "PageSyncMarkdown", "UV", "CYAML", "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            linkerSettings: [.linkedLibrary("yaml")]),

        // The pager's imperative shell: TTY, TCP, timers and signals around PagerModel.
        .target(name: "PagerShell", dependencies: ["PageSyncPager", "PageSyncCore", "UV"]),

        // Executables only wire things together.
        .executableTarget(name: "pagesyncd", dependencies: [
            "PageSyncServer", "PageSyncCore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], linkerSettings: staticSwiftRuntime),
        .executableTarget(name: "pagesync", dependencies: [
            "PagerShell", "PageSyncCore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], linkerSettings: staticSwiftRuntime),
        .executableTarget(
            name: "pagesync-bench", dependencies: ["UV", "PageSyncCore", "CWslay", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: staticSwiftRuntime),

        .testTarget(name: "PageSyncCoreTests", dependencies: ["PageSyncCore", "TestSupport"], swiftSettings: testCode),
        // Test support shared by test targets: certificates made with the openssl CLI.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: testCode),
        .testTarget(name: "UVTests", dependencies: ["UV", "TestSupport"], swiftSettings: testCode),
        .testTarget(name: "PageSyncServerTests", dependencies: ["PageSyncServer", "PageSyncCore", "UV"], swiftSettings: testCode),
        .testTarget(name: "PageSyncPagerTests", dependencies: ["PageSyncPager", "PageSyncMarkdown", "PageSyncCore", "TestSupport"], swiftSettings: testCode),
        .testTarget(name: "PageSyncMarkdownTests", dependencies: ["PageSyncMarkdown"], swiftSettings: testCode),
        // Runs the real binaries over real sockets.
        .testTarget(name: "EndToEndTests", dependencies: ["PageSyncCore", "TestSupport"], swiftSettings: testCode),
    ],
    swiftLanguageModes: [.v6]
)
