import Foundation
import Testing
@testable import AvatarCacheStore

/// A cache mounted read-only is opened through SQLite's immutable URI (the readers run as
/// another user: the end-to-end ReadOnlyCacheTests).
@Suite struct ImmutableURITests {
    @Test func theImmutableURIEscapesWhatSQLiteWouldReadAsItsOwn() {
        #expect(CacheIndex.immutableURI("/srv/a b/c?d#e%f/index.sqlite") == "file:/srv/a%20b/c%3Fd%23e%25f/index.sqlite?immutable=1")
    }
}
