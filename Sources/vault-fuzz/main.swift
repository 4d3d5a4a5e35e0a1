// vault-fuzz TARGET [libFuzzer options] [CORPUS…]     (built by scripts/fuzz with -DFUZZING)
// vault-fuzz TARGET FILE…                              (the normal build: replays inputs)
//
// One binary for every target of FuzzTargets, so a fuzz build compiles the package once.
// SwiftPM supplies `main`, so libFuzzer's own is never linked; this file hands control to
// libFuzzer's driver instead, which then calls LLVMFuzzerTestOneInput for each input.
import FoundationEssentials
import Glibc
import FuzzTargets
#if FUZZING
import CLibFuzzer
#endif

func fail(_ message: String, status: CInt) -> Never {
    _ = Array((message + "\n").utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(status)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let chosen = FuzzTarget(rawValue: arguments[1]) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    fail("usage: vault-fuzz TARGET [libFuzzer options | input files]\n  targets: \(names)", status: 64)
}

// The callback is a C function pointer, so it cannot capture; the choice lives in a global
// written once before the driver starts.
nonisolated(unsafe) var target = chosen

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    target.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if FUZZING
// libFuzzer reads its own options from argv; the target name is ours, so it is taken out.
var driverArguments = [arguments[0]] + arguments.dropFirst(2)
var cArguments = driverArguments.map { strdup($0) } + [nil]
var argc = CInt(driverArguments.count)
exit(cArguments.withUnsafeMutableBufferPointer { buffer in
    var argv = buffer.baseAddress
    return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
})
#else
// Without libFuzzer: run each named file through the target once, as a crash reproducer.
for path in arguments.dropFirst(2) {
    guard let data = FileManager.default.contents(atPath: path) else {
        fail("vault-fuzz: error: cannot read '\(path)'", status: 1)
    }
    print("\(path): \(chosen.run([UInt8](data)) ? "accepted" : "refused")")
}
#endif
