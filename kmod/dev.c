// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/pmcring: the misc device; each open() is a session.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include "pmcring.h"

LIST_HEAD(pmcring_active);

static int pmcring_dev_open(struct inode *inode, struct file *file)
{
	return 0;
}

static int pmcring_dev_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations pmcring_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= pmcring_dev_open,
	.release	= pmcring_dev_release,
	.llseek		= noop_llseek,
};

static struct miscdevice pmcring_dev = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= PMCRING_DEV_NAME,
	.fops		= &pmcring_dev_fops,
	.mode		= 0600,
};

static int __init pmcring_init(void)
{
	int err;

	err = pmcring_src_init();
	if (err)
		return err;
	err = misc_register(&pmcring_dev);
	if (err)
		goto err_src;
	return 0;

err_src:
	pmcring_src_exit();
	return err;
}

static void __exit pmcring_exit(void)
{
	misc_deregister(&pmcring_dev);
	pmcring_src_exit();
}

module_init(pmcring_init);
module_exit(pmcring_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hwpmc-style records in per-CPU mmapped rings");
MODULE_AUTHOR("pmcring developers");
