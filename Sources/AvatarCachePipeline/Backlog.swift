import AvatarCacheConfiguration
import Dispatch
/// The downloads' hold on memory: bodies being downloaded, and bodies downloaded but not
/// yet decoded. A download is admitted (`admit`) only while there is room, and gives its
/// place back once (`release`), whatever became of it.
///
/// Two bounds. By count: beyond a couple of bodies waiting per decode thread more only
/// hold memory, so no download starts while `limit` of them wait; bodies smaller than
/// `small` bytes are counted apart, against `smallLimit` (8 times `limit` unless told) or
/// the requests window (`window`), the larger: each holds little and decodes in a few
/// milliseconds, and counted with the large ones a run of them left the decode threads
/// waiting for the next downloads while only a couple were kept ahead. Far away, a round
/// trip's answers come together: held to a fixed 32, the next requests waited until most of
/// them were decoded, and the decode threads then waited a round trip for their answers
/// (100 ms away: 1.52 times the loopback time; with the window, 1.2 times). By bytes: the bodies still downloading count too, by their
/// `Content-Length` once the headers give it (`sized`), and before that by the mean size of
/// the bodies so far; no download starts while they and the waiting bodies add up to
/// `byteLimit`. Without it, every download waiting for room started at once when room
/// came (up to `--concurrency`), and each of their bodies then waited in memory.
///
/// A download still under way `slowAfter` seconds after it started stops counting until
/// its body has come: its bytes arrive at the network's pace, not in a burst, and a server
/// declaring a large body and sending it a byte a second must not hold every other
/// download back until it times out.
///
/// While the decode threads starve (every body queued is too large for the decode memory
/// left, `starving`), one download at a time may start beyond these bounds, at most
/// `extraLimit` such bodies held: at the bounds, nothing smaller that fits could come.
actor Backlog {
    /// Which count a body is in.
    private enum Hold { case large, small }

    /// One admitted download's place.
    struct Ticket: Hashable, Sendable { fileprivate let id: Int }

    private struct Place {
        /// What it counts for in `bytes`.
        var bytes: Int
        /// Set once its body has come.
        var hold: Hold?
        /// Its size is known (it joined the mean).
        var sized = false
        /// Still downloading after `slowAfter`: not counted until its body has come.
        var slow = false
        /// Admitted beyond the bounds, for decode threads starving (`starving`).
        var extra = false
        /// When it was admitted (uptime nanoseconds).
        var admitted: UInt64 = 0
    }

    let limit: Int
    let small: Int
    let smallLimit: Int
    let byteLimit: Int
    let slowAfter: Double
    /// The requests allowed in flight now (`RequestLimiter.currentWindow`): small bodies
    /// may wait up to that many, so that a round trip's worth of answers arriving together
    /// does not stop the next requests until most of them are decoded.
    let window: @Sendable () -> Int
    private var held = 0
    private var smallHeld = 0
    /// What the places count for, added up.
    private var bytes = 0
    private var places: [Int: Place] = [:]
    /// Bytes of the bodies downloaded and waiting for their decode (or decoding), and the
    /// most they came to: the report's `peakBytesWaitingForDecode`.
    private var waitingBytes = 0
    private(set) var peakWaitingBytes = 0
    private var nextID = 0
    /// One task marks the downloads that pass `slowAfter` (`watchSlow`), while any is under way.
    private var watching = false
    /// Sizes known so far, for the mean a download counts for before its headers.
    private var sizedBytes = 0
    private var sizedCount = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []
    /// The decode threads wait while every body queued waits for memory (a 12 MP HEIC holds
    /// most of it): one download more may start beyond the bounds, so that a photo that fits
    /// beside it can come. At most `extraLimit` such bodies are held, and one downloads at a time.
    private var starving = (on: false, sequence: 0)
    private var extraHeld = 0
    private var extraDownloading = 0
    let extraLimit = 2

    init(limit: Int, small: Int = 256 << 10, smallLimit: Int? = nil,
         byteLimit: Int = Int(Settings.maxDownloadMemory.defaultValue), slowAfter: Double = 1,
         window: @escaping @Sendable () -> Int = { 0 }) {
        self.window = window
        self.limit = limit
        self.small = small
        self.smallLimit = smallLimit ?? 8 * limit
        self.byteLimit = byteLimit
        self.slowAfter = slowAfter
    }

    /// Downloads woken to start (`wake`) that have not yet taken their place: each counts
    /// for the estimate meanwhile, so that a wake lets start only what fits.
    private var woken = 0
    /// Downloads under way whose body has not come (slow ones aside): the bodies they will
    /// bring, which a wake leaves room for under the count bounds.
    private var underway = 0

    /// One download at least always runs, whatever its size.
    private var withinBounds: Bool {
        held < limit && smallHeld < max(smallLimit, window())
            && (bytes + woken * estimate < byteLimit || (places.isEmpty && woken == 0))
    }
    private var hasRoom: Bool { withinBounds || (starving.on && extraDownloading == 0 && extraHeld < extraLimit) }

    /// The decode pool says whether its threads starve (`DecodeWorkerPool.tellStarving`).
    func starving(_ on: Bool, sequence: Int) {
        guard sequence > starving.sequence else { return }
        starving = (on, sequence)
        wake()
    }

    /// What a download counts for before its size is known: the mean of the sizes known
    /// so far (a small body's size at first).
    private var estimate: Int { sizedCount == 0 ? small : sizedBytes / sizedCount }

    /// Waits until there is room, then takes a place for one download.
    func admit() async -> Ticket {
        while !hasRoom {
            await withCheckedContinuation { waiters.append($0) }
            woken -= 1
        }
        nextID += 1
        let ticket = Ticket(id: nextID)
        var place = Place(bytes: estimate, admitted: DispatchTime.now().uptimeNanoseconds)
        if !withinBounds {
            place.extra = true
            extraHeld += 1
            extraDownloading += 1
        }
        places[ticket.id] = place
        bytes += estimate
        underway += 1
        if !watching {
            watching = true
            Task { await self.watchSlow() }
        }
        return ticket
    }

    /// Marks each download still under way `slowAfter` seconds after its admission, waking
    /// at the next one due; ends when none is under way (`admit` starts it again). One task
    /// for the run, not a task and a timer a download.
    private func watchSlow() async {
        let after = UInt64(slowAfter * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            var nextDue: UInt64?
            var due: [Int] = []
            for (id, place) in places where place.hold == nil && !place.slow {
                let at = place.admitted + after
                if at <= now { due.append(id) } else { nextDue = min(nextDue ?? at, at) }
            }
            for id in due { markSlow(Ticket(id: id)) }
            guard let nextDue else {
                watching = false
                return
            }
            try? await Task.sleep(nanoseconds: nextDue - now)
        }
    }

    /// The download's body will be `size` bytes (its `Content-Length`).
    func sized(_ ticket: Ticket, bytes size: Int) {
        guard var place = places[ticket.id], place.hold == nil else { return }
        learn(size, &place)
        if !place.slow { count(size, &place) }
        places[ticket.id] = place
        wake()
    }

    /// The body is downloaded (`size` bytes) and waits for its decode. Returns how many
    /// bodies wait now, this one included.
    @discardableResult
    func downloaded(_ ticket: Ticket, bytes size: Int) -> Int {
        guard var place = places[ticket.id], place.hold == nil else { return held + smallHeld }
        learn(size, &place)
        let hold: Hold = size < small ? .small : .large
        switch hold {
        case .large: held += 1
        case .small: smallHeld += 1
        }
        place.hold = hold
        if !place.slow { underway -= 1 }
        if place.extra { extraDownloading -= 1 }
        count(size, &place)
        waitingBytes += size
        peakWaitingBytes = max(peakWaitingBytes, waitingBytes)
        places[ticket.id] = place
        wake()
        return held + smallHeld
    }

    /// The download failed, or its body is decoded (or failed to): its place is free.
    func release(_ ticket: Ticket) {
        guard let place = places.removeValue(forKey: ticket.id) else { return }
        bytes -= place.bytes
        if place.hold == nil && !place.slow { underway -= 1 }
        if place.hold != nil { waitingBytes -= place.bytes }
        if place.extra {
            extraHeld -= 1
            if place.hold == nil { extraDownloading -= 1 }
        }
        switch place.hold {
        case .large: held -= 1
        case .small: smallHeld -= 1
        case nil: break
        }
        wake()
    }

    /// `slowAfter` has passed since the download started: if it is still under way, it
    /// stops counting.
    private func markSlow(_ ticket: Ticket) {
        guard var place = places[ticket.id], place.hold == nil, !place.slow else { return }
        underway -= 1
        place.slow = true
        count(0, &place)
        places[ticket.id] = place
        wake()
    }

    /// Lets waiting downloads look again, as many as there is room for, each counted at
    /// the estimate until it takes its place (a wait that woke them all let each start
    /// before any had a size, and their bodies then all waited). Every change of a place
    /// calls it. Woken one per change instead, far away the answers of a round trip let
    /// about three more start each, and the requests grew threefold a round trip, as a
    /// slow start: 250 ms away, five round trips to reach the window.
    /// Beyond the bounds (decode threads starving) one at a time.
    private func wake() {
        // The bodies still to come count against the bound they will be held under (the
        // estimate says which): as many start as could then wait within it.
        let bodies = estimate < small ? max(smallLimit, window()) - smallHeld : limit - held
        while !waiters.isEmpty, withinBounds, underway + woken < bodies {
            woken += 1
            waiters.removeFirst().resume()
        }
        if !waiters.isEmpty, woken == 0, hasRoom {
            woken += 1
            waiters.removeFirst().resume()
        }
    }

    /// The place counts for `size` bytes from now on.
    private func count(_ size: Int, _ place: inout Place) {
        bytes += size - place.bytes
        place.bytes = size
    }

    /// The first size a download is given joins the mean.
    private func learn(_ size: Int, _ place: inout Place) {
        guard !place.sized else { return }
        place.sized = true
        sizedBytes += size
        sizedCount += 1
    }
}
