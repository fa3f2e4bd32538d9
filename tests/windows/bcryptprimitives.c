/* ProcessPrng, which Rust's standard library takes its random bytes from on Windows (since
 * 1.78), for Wine 8, which lacks it: RtlGenRandom (advapi32's SystemFunction036) gives the
 * same. Built with mingw into the Wine prefix by scripts/windows-tests; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    return SystemFunction036(data, (ULONG)length);
}
