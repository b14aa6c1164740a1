/// The version of pagesync, set here and nowhere else: `pagesyncd --version` and
/// `pagesync --version` print it, and `make deb` names the Debian package after what the built
/// `pagesyncd --version` prints (pagesync_<version>-<revision>_amd64.deb). Raise it with each
/// release; the wire protocol has its own version (`pagesync/1` in HELLO, PROTOCOL.md).
public enum PageSyncVersion {
    public static let current = "0.1.0"
}
