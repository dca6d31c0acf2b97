import Foundation

/// The first error of work done elsewhere.
package final class FirstError: @unchecked Sendable {
    private let lock = NSLock()
    private var error: Error?

    package init() {}

    package var value: Error? { lock.withLock { error } }

    package func record(_ error: Error) {
        lock.withLock { self.error = self.error ?? error }
    }
}
