

ByJ¬›yiŒO„Y5h™2Ü9„ªpwGTLb…]˜V@1kXn<|E|’o<pzZÇ>Nzoe‰WMo–­TVk‹LjRc¬1s„wI™&\[o‡Li<„qXz“E(ŠvpP[T…DiT€<g|<CMƒOQYUXmETVXlZVMe\qAX£DUL]’ƒHrf_r`€Mqzj{WMcLŽ nTXfAjTjeMK}vzQ8Q—|nRvWFa~QeLndhW\X~aIvF’ƒŠÄ¢—~tŠbm–œv¡e‡wœŒy„£—Ž}\wqq [¥˜\¢‘˜ˆ‡zzp<qy…uu_Ãi“‡ƒ™”‰”…d”Ä~—’h”U€”Á^z€›oPŽ—}|ƒ–ƒgy’s–