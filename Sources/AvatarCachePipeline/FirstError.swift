import Synchronization

/// The first error of work done elsewhere.
final class FirstError: Sendable {
    private let error = Mutex<(any Error)?>(nil)

    var value: (any Error)? { error.withLock { $0 } }

    func record(_ error: any Error) {
        self.error.withLock { $0 = $0 ?? error }
    }
}
