import Foundation
import Testing
@testable import AvatarCacheSupport

/// The one primitive beside Mutex: threads that sleep until another changes the state.
struct ThreadConditionTests {
    /// A counting gate of two: of eight threads, never more than two inside at once, and
    /// every one gets in (each sleeps until a place is given back and it is woken).
    @Test func aGateOfTwoLetsTwoInAtOnceAndEveryThreadThrough() {
        struct Gate { var free = 2; var inside = 0; var most = 0; var passed = 0 }
        let gate = ThreadCondition(Gate())
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<50 {
                    gate.withLock { held in
                        while held.state.free == 0 { held.wait() }
                        held.state.free -= 1
                        held.state.inside += 1
                        held.state.most = max(held.state.most, held.state.inside)
                    }
                    usleep(20)
                    gate.withLock { held in
                        held.state.inside -= 1
                        held.state.passed += 1
                        held.state.free += 1
                        held.signal()
                    }
                }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 30) == .success, "a thread slept through its wake-up")
        let end = gate.withLock { held in held.state }
        #expect(end.most == 2)
        #expect(end.passed == 400)
        #expect(end.free == 2 && end.inside == 0)
    }

    /// A state changed in place, and a waiter woken by `broadcast` sees the change.
    @Test func aBroadcastWakesEveryWaiterToTheNewState() {
        let flag = ThreadCondition((open: false, woken: 0))
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                flag.withLock { held in
                    while !held.state.open { held.wait() }
                    held.state.woken += 1
                }
                group.leave()
            }
        }
        usleep(50_000)
        #expect(flag.withLock { held in held.state.woken } == 0, "nobody passes a closed flag")
        flag.withLock { held in
            held.state.open = true
            held.broadcast()
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        #expect(flag.withLock { held in held.state.woken } == 4)
    }
}
