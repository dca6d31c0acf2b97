import Foundation

/// The first error of work done elsewhere.
final class FirstError: @unchecked Sendable {
    private let lock = NSLock()
    private var error: Error?

    var value: Error? { lock.withLock { error } }

    func record(_ error: Error) {
        lock.withLock { self.error = self.error ?? error }
    }
}
