import CBuildStamp

/// The version, written here once: `--version`, the Debian package and tarball
/// (`scripts/package` asks the built binary), the man pages, the run report,
/// metadata.json's `generator` and the HTTP User-Agent all read it from here.
public enum AvatarCacheVersion {
    /// The release number; bump it here.
    public static let number = "0.3.0"

    /// The commit the binary was built from (12 hex digits, `.dirty` when the tree had
    /// uncommitted changes), when the build was told (`scripts/build-env` sets
    /// `AVATAR_CACHE_COMMIT`; Package.swift hands it to the CBuildStamp target).
    public static let commit: String? = {
        let stamp = String(cString: cbuildstamp_commit())
        return stamp.isEmpty ? nil : stamp
    }()

    /// `0.2.0+g1fdc6fa12345`: the number, then the commit as SemVer build metadata (and
    /// a Debian upstream version); `0.2.0` alone from a build that was not told.
    public static let string = number + (commit.map { "+g" + $0 } ?? "")
}
