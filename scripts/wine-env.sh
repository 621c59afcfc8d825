# Sourced by scripts/wine-test.sh and scripts/npm-test.sh --windows (from the repository's
# top folder, with wine and the MinGW compiler installed): exports a Wine prefix of our own
# under target/ and makes it able to run executables built by Rust.

# A Wine prefix of our own under target/, created on first use; no Wine debug chatter.
export WINEPREFIX="${WINEPREFIX:-$PWD/target/wine-prefix}"
export WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="${WINEDLLOVERRIDES:-mscoree,mshtml=}"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="${CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER:-wine}"
mkdir -p "$WINEPREFIX"
wineboot --init >/dev/null 2>&1 || true

# Rust's standard library (1.78 on) takes its random seeds from ProcessPrng in
# bcryptprimitives.dll, which Wine added in Wine 9: for an older Wine, a stand-in that asks
# bcrypt's system generator goes into this prefix.
system32="$WINEPREFIX/drive_c/windows/system32"
if ! ls "$(dirname "$(command -v wine)")"/../lib/*/wine/x86_64-windows/bcryptprimitives.dll \
  >/dev/null 2>&1 && [ ! -f "$system32/bcryptprimitives.dll" ]; then
  prng_work="$(mktemp -d)"
  cat >"$prng_work/prng.c" <<'C'
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
C
  printf 'LIBRARY bcryptprimitives\nEXPORTS\n    ProcessPrng\n' >"$prng_work/prng.def"
  x86_64-w64-mingw32-gcc -shared -O2 -o "$system32/bcryptprimitives.dll" \
    "$prng_work/prng.c" "$prng_work/prng.def" -lbcrypt
  rm -rf "$prng_work"
fi
